import Foundation
import SerialDBSyncWire

extension SyncTable {
    /// The stored rows of an earlier definition in this one, as the server serves them from
    /// now on: renamed columns under their new names, dropped columns left out, new columns
    /// with their DEFAULT, each row validated as an upload would be, and its unique values
    /// computed. A tombstone keeps its version; one whose key this definition cannot read stays
    /// as it was.
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` naming the table and the rows
    ///   this definition refuses (a new NOT NULL column without a DEFAULT, a new CHECK, two
    ///   rows of one owner that a new UNIQUE or a new key makes equal), so that no device is
    ///   ever served a row it cannot apply.
    func carryOver(_ rows: [SyncStoredRow]) throws -> [SyncStoredRow] {
        var carried: [SyncStoredRow] = []
        carried.reserveCapacity(rows.count)
        var failures: [String] = []
        // Keyed by bytes, as the store compares them (Swift's == is canonical equivalence).
        var keys: [String: [[UInt8]: String]] = [:]
        var holders: [String: [[UInt8]: String]] = [:]
        func describe(_ row: SyncStoredRow) -> String {
            "the row with key \(row.key) of account \(JSONWriter.quoted(row.owner))"
        }
        for row in rows {
            var next = row
            do throws(SyncRejection) {
                let members = try carriedMembers(row.rowJSON)
                if row.deleted {
                    let key = try validate(key: members)
                    next.key = key.key
                    next.rowJSON = key.keyJSON
                } else {
                    let valid = try validate(row: members)
                    next.key = valid.key
                    next.rowJSON = valid.rowJSON
                    next.uniqueValues = valid.uniqueValues
                }
            } catch {
                if !row.deleted { failures.append("\(describe(row)): \(error.message)") }
            }
            if let other = keys[row.owner, default: [:]].updateValue(row.key, forKey: Array(next.key.utf8)) {
                failures.append("\(describe(row)) and the one with key \(other) now have the same key \(next.key)")
            }
            for unique in next.uniqueValues {
                if let other = holders[row.owner, default: [:]].updateValue(row.key, forKey: Array(unique.value.utf8)) {
                    failures.append(
                        "\(describe(row)) and the one with key \(other): UNIQUE constraint failed: \(unique.constraint)"
                    )
                }
            }
            carried.append(next)
        }
        guard failures.isEmpty else {
            let shown = failures.prefix(10).joined(separator: "; ")
            let more = failures.count > 10 ? "; and \(failures.count - 10) more" : ""
            throw SyncServerError(
                .invalidConfiguration,
                "the definition of table \(JSONWriter.quoted(name)) (struct_version \(structVersion)) refuses "
                    + "\(failures.count) of the rows the store holds, so no device could apply them: \(shown)\(more). "
                    + "Give a new NOT NULL column a DEFAULT, or change the rows or the new constraint, and start again")
        }
        return carried
    }

    /// A stored row's members under this definition's names: renamed columns take their new
    /// names, columns it no longer declares are left out.
    private func carriedMembers(_ rowJSON: String) throws(SyncRejection) -> [String: JSONValue] {
        let parsed: JSONValue
        do {
            parsed = try JSONValue.parse(Data(rowJSON.utf8))
        } catch {
            throw SyncRejection("the stored row is not JSON: \(error)")
        }
        guard var members = parsed.objectValue else { throw SyncRejection("the stored row is not a JSON object") }
        for (new, old) in renamedColumns
        where !members.keys.contains(where: { $0.asciiLowercased == new.asciiLowercased }) {
            if let oldName = members.keys.first(where: { $0.asciiLowercased == old.asciiLowercased }) {
                members[new] = members.removeValue(forKey: oldName)
            }
        }
        return members.filter { hasColumn(named: $0.key) }
    }
}
