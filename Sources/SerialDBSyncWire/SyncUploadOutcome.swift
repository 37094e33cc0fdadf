/// What a server decided for one mutation of an upload, as its store keeps it: the wire's
/// ``SyncMutationResult`` with a conflict's row still in the wire encoding.
public enum SyncUploadOutcome: Sendable, Equatable {
    /// Stored with this version.
    case applied(version: Int64)
    /// `base_version` did not match; nothing changed. `current` is the key's state on the server.
    case conflict(current: SyncEncodedChange)
    /// Refused, with the reason.
    case rejected(message: String)
    /// A seq at or below the highest one answered for its client whose result has expired:
    /// it was answered before, and nothing changed now.
    case duplicate

    /// The wire status.
    public var status: SyncMutationResult.Status {
        switch self {
        case .applied: return .applied
        case .conflict: return .conflict
        case .rejected: return .rejected
        case .duplicate: return .duplicate
        }
    }

    /// Writes the result of mutation `seq`, as ``SyncMutationResult/write(to:)`` does.
    public func write(seq: Int64, to writer: inout JSONWriter) {
        SyncMutationResult.writeHead(seq: seq, status: status, to: &writer)
        switch self {
        case .applied(let version):
            writer.field(.version)
            writer.integer(version)
        case .conflict(let current):
            writer.field(.current)
            current.write(to: &writer)
        case .rejected(let message):
            writer.field(.error)
            writer.string(message)
        case .duplicate:
            break
        }
        writer.raw("}")
    }
}

extension SyncUploadOutcome {
    /// An outcome as a store records it under (account, client id, seq), so that a retry is
    /// answered the same: a status and the columns it needs. Every store keeps these five
    /// columns, so that they all record and read results alike.
    public struct Record: Sendable, Equatable {
        /// `applied`, `conflict` or `rejected` (a duplicate is answered, never recorded).
        public var status: String
        /// An applied version, or a conflict's current version.
        public var version: Int64?
        /// A conflict's current deleted flag.
        public var deleted: Bool?
        /// A conflict's current row, as JSON.
        public var row: String?
        /// A rejection's reason.
        public var message: String?

        /// A record of these columns.
        public init(status: String, version: Int64?, deleted: Bool?, row: String?, message: String?) {
            self.status = status
            self.version = version
            self.deleted = deleted
            self.row = row
            self.message = message
        }
    }

    /// The record to keep, or `nil` for a duplicate, which is never recorded.
    public var record: Record? {
        switch self {
        case .applied(let version):
            return Record(status: status.rawValue, version: version, deleted: nil, row: nil, message: nil)
        case .conflict(let current):
            return Record(
                status: status.rawValue, version: current.version, deleted: current.deleted, row: current.rowJSON,
                message: nil)
        case .rejected(let message):
            return Record(status: status.rawValue, version: nil, deleted: nil, row: nil, message: message)
        case .duplicate:
            return nil
        }
    }

    /// The outcome a record holds.
    /// - Throws: ``WireFormatError`` for a status it does not know or a column it lacks.
    public init(record: Record) throws(WireFormatError) {
        switch (SyncMutationResult.Status(rawValue: record.status), record.version, record.deleted, record.row) {
        case (.applied?, let version?, _, _):
            self = .applied(version: version)
        case (.conflict?, let version?, let deleted?, let row?):
            self = .conflict(current: SyncEncodedChange(version: version, deleted: deleted, rowJSON: row))
        case (.rejected?, _, _, _) where record.message != nil:
            self = .rejected(message: record.message!)
        default:
            throw WireFormatError(
                message: "a remembered upload result has status \(record.status) and missing fields")
        }
    }
}
