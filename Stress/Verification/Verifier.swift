/// Compares the rows found on disk with the writes that were acknowledged.
///
/// - every acknowledged insert has exactly one row;
/// - every acknowledged update is visible: its row holds it or a later write of the same owner;
/// - every row holds a write that was acknowledged, or that was in flight when a process was
///   killed (at most the one write after a writer's last acknowledged or failed one);
/// - every row's payload (and note, for writes made with the new schema) matches that write;
/// - every seed row survived.
enum Verifier {
    static func verify(
        items: [StoredItem], seedRows: Int, acknowledgements: [Acknowledgement], allowedInFlight: [Int: Int] = [:]
    ) -> Verification {
        var result = Verification()
        var acknowledged: [OperationID: Acknowledgement] = [:]
        for acknowledgement in acknowledgements { acknowledged[acknowledgement.operation.id] = acknowledgement }
        result.acknowledged = acknowledged.count

        var rows: [RowKey: StoredItem] = [:]
        var seedRowsFound = 0
        for item in items {
            if rows.updateValue(item, forKey: item.key) != nil {
                result.duplicated.insert(item.key)
                result.note("row \(item.key.author).\(item.key.seq) is stored more than once")
                continue
            }
            if item.author == ItemTable.seedAuthor {
                if item.id == item.seq && item.seq >= 1 && item.seq <= seedRows {
                    seedRowsFound += 1
                } else {
                    result.wrongValues.insert(item.key)
                    result.note("row \(item.id) claims to be seed row \(item.seq)")
                }
            }
            check(item, acknowledged, allowedInFlight, &result)
        }
        result.seedRowsMissing = seedRows - seedRowsFound
        if result.seedRowsMissing > 0 { result.note("\(result.seedRowsMissing) seed rows are missing") }

        for acknowledgement in acknowledged.values {
            let operation = acknowledgement.operation
            guard let row = rows[operation.target] else {
                result.lost.insert(operation.id)
                result.note("acknowledged \(describe(operation)) has no row")
                continue
            }
            if operation.kind == .update && (row.lastAuthor == ItemTable.seedAuthor || row.lastWrite < operation.id) {
                result.lost.insert(operation.id)
                result.note("acknowledged \(describe(operation)) is missing: the row holds \(describe(row.lastWrite))")
            }
        }
        return result
    }

    private static func check(
        _ item: StoredItem, _ acknowledged: [OperationID: Acknowledgement], _ allowedInFlight: [Int: Int],
        _ result: inout Verification
    ) {
        let insert = OperationID(author: item.author, seq: item.seq)
        if item.author != ItemTable.seedAuthor {
            classify(insert, kind: .insert, row: item.key, acknowledged, allowedInFlight, &result)
        }
        let expectedPayload: String
        if item.lastAuthor == ItemTable.seedAuthor {
            expectedPayload = ItemTable.seedPayload(id: item.id)
            if item.note != nil || item.lastSeq != 0 { wrong(item, "a seed row that no write touched", &result) }
        } else {
            let last = item.lastWrite
            if last != insert {
                classify(last, kind: .update, row: item.key, acknowledged, allowedInFlight, &result)
            }
            expectedPayload = ItemTable.payload(last)
            if let acknowledgement = acknowledged[last] {
                if acknowledgement.afterUpgradeStart && item.note != ItemTable.note(last) {
                    wrong(
                        item, "note \(item.note ?? "NULL") for \(describe(last)), written with the new column", &result)
                } else if !acknowledgement.afterUpgradeStart && last == insert && item.note != nil {
                    wrong(item, "a note for \(describe(last)), written without it", &result)
                }
            }
        }
        if item.payload != expectedPayload {
            wrong(item, "payload \(item.payload ?? "NULL") instead of \(expectedPayload)", &result)
        }
    }

    /// A write found on disk: acknowledged (for this very row), in flight at a kill, or unexpected.
    private static func classify(
        _ write: OperationID, kind: WriteOperation.Kind, row: RowKey,
        _ acknowledged: [OperationID: Acknowledgement], _ allowedInFlight: [Int: Int], _ result: inout Verification
    ) {
        if let acknowledgement = acknowledged[write] {
            if acknowledgement.operation.target != row || acknowledgement.operation.kind != kind {
                result.wrongValues.insert(row)
                result.note("row \(row.author).\(row.seq) holds \(describe(write)), which wrote another row")
            }
        } else if allowedInFlight[write.author] == write.seq {
            result.inFlightCommitted.insert(write)
        } else {
            result.unexpected.insert(write)
            result.note("row \(row.author).\(row.seq) holds \(describe(write)), which was never acknowledged")
        }
    }

    private static func wrong(_ item: StoredItem, _ what: String, _ result: inout Verification) {
        result.wrongValues.insert(item.key)
        result.note("row \(item.author).\(item.seq): \(what)")
    }

    private static func describe(_ operation: WriteOperation) -> String {
        "\(operation.kind == .insert ? "insert" : "update") \(operation.id.author).\(operation.id.seq)"
    }

    private static func describe(_ id: OperationID) -> String {
        "write \(id.author).\(id.seq)"
    }
}
