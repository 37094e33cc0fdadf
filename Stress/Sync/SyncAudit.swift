import Foundation

/// Every change the server applied, read from the file ``AuditingSyncStore`` wrote.
struct SyncAudit: Sendable {
    /// Account → value → the id it was written to and its version, for every applied upsert.
    private(set) var upserts: [String: [String: (id: String, version: Int64)]] = [:]
    /// Account → id → the highest version of an applied delete.
    private(set) var deletes: [String: [String: Int64]] = [:]
    /// `CLIENT-ID ID` of every applied delete.
    private(set) var deletesByClient: Set<String> = []
    /// Account → id → every change applied to the key, in version order.
    private(set) var history: [String: [String: [AppliedChange]]] = [:]

    /// One change the server applied to a key.
    struct AppliedChange: Sendable {
        let version: Int64
        /// The value written; `nil` for a delete.
        let value: String?
        /// The value the update replaced on its device (`nil` for an insert or a delete).
        let previous: String?
    }

    init(path: String) throws {
        let text = FileManager.default.fileExists(atPath: path) ? try String(contentsOfFile: path, encoding: .utf8) : ""
        for line in text.split(separator: "\n") {
            let parts = line.split(separator: "\t", maxSplits: 4, omittingEmptySubsequences: false)
            guard parts.count == 5, let version = Int64(parts[0]) else {
                throw StressError("the server's audit has a line it did not write: \(line.prefix(200))")
            }
            let account = String(parts[2])
            let fields = try Self.fields(of: String(parts[4]))
            let deleted = parts[1] == "delete"
            history[account, default: [:]][fields.id, default: []].append(
                AppliedChange(version: version, value: deleted ? nil : fields.value, previous: fields.previous))
            if deleted {
                deletes[account, default: [:]][fields.id] = max(deletes[account]?[fields.id] ?? 0, version)
                deletesByClient.insert("\(parts[3]) \(fields.id)")
            } else if let value = fields.value {
                upserts[account, default: [:]][value] = (fields.id, version)
            }
        }
        // A result the store remembered is audited each time it is answered: once per version.
        history = history.mapValues { keys in
            keys.mapValues { changes in
                var seen = Set<Int64>()
                return changes.sorted { $0.version < $1.version }.filter { seen.insert($0.version).inserted }
            }
        }
    }

    /// The id, origin, value and previous value of a row (or the id of a key) in the wire's JSON.
    static func fields(of json: String) throws -> (id: String, origin: String?, value: String?, previous: String?) {
        guard let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any],
            let id = object["id"] as? String
        else { throw StressError("a row of the server is not the synced table's JSON: \(json.prefix(200))") }
        return (id, object["origin"] as? String, object["val"] as? String, object["prev"] as? String)
    }
}
