import SerialDB
@_exported import SerialDBSyncWire

// The protocol's messages and values live in SerialDBSyncWire, which knows nothing of the
// core; `import SerialDBSync` brings them along, so that an app names them as before.

extension SyncValue {
    /// The value of a database column.
    public init(_ value: DatabaseValue) {
        switch value {
        case .null: self = .null
        case .integer(let integer): self = .integer(integer)
        case .real(let real): self = .real(real)
        case .text(let text): self = .text(text)
        case .blob(let data): self = .blob(data)
        }
    }

    /// The value to store in a column.
    public var databaseValue: DatabaseValue {
        switch self {
        case .null: return .null
        case .integer(let integer): return .integer(integer)
        case .real(let real): return .real(real)
        case .text(let text): return .text(text)
        case .blob(let data): return .blob(data)
        }
    }
}
