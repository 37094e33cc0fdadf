import SerialDBSyncWire

/// The members of one JSON object of a message, read by name with errors that say which field
/// of which object is missing or of the wrong kind.
struct WireFields {
    private let members: [String: JSONValue]
    private let context: String

    init(_ value: JSONValue, context: String) throws {
        guard let members = value.objectValue else {
            throw WireFormatError(message: "\(context) is \(value.kindName), not an object")
        }
        self.members = members
        self.context = context
    }

    func string(_ name: String) throws -> String {
        try required(name, "a string") { $0.stringValue }
    }

    func integer(_ name: String) throws -> Int64 {
        try required(name, "an integer") { value in
            if case .integer(let integer) = value { return integer }
            return nil
        }
    }

    /// An integer member that may be absent (or null).
    func optionalInteger(_ name: String) throws -> Int64? {
        optional(name) == nil ? nil : try integer(name)
    }

    func bool(_ name: String) throws -> Bool {
        try required(name, "a boolean") { $0.boolValue }
    }

    func array(_ name: String) throws -> [JSONValue] {
        try required(name, "an array") { $0.arrayValue }
    }

    func object(_ name: String) throws -> [String: JSONValue] {
        try required(name, "an object") { $0.objectValue }
    }

    /// A row object: column name → value.
    func row(_ name: String) throws -> [String: SyncValue] {
        try SyncValue.row(try object(name), context: "\(name) of \(context)")
    }

    /// The member, or `nil` when it is absent or null.
    func optional(_ name: String) -> JSONValue? {
        guard let value = members[name], value != .null else { return nil }
        return value
    }

    private func required<T>(_ name: String, _ kind: String, _ read: (JSONValue) -> T?) throws -> T {
        guard let value = members[name] else {
            throw WireFormatError(message: "\(context) has no \(JSONWriter.quoted(name))")
        }
        guard let typed = read(value) else {
            throw WireFormatError(
                message: "\(JSONWriter.quoted(name)) of \(context) is \(value.kindName), not \(kind)")
        }
        return typed
    }
}
