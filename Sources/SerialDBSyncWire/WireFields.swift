/// The members of one JSON object of a message, read by ``WireName`` with errors that say which
/// member of which object is missing or of the wrong kind.
///
/// Two readings of numbers, because the two directions differ: an answer's numbers are read
/// strictly (``integer(_:)``: an integer literal), a request's counts leniently
/// (``count(_:required:)``: any whole number of 0 or more, `3.0` included), as servers of the protocol
/// have always accepted them.
public struct WireFields: Sendable {
    /// The object's members.
    public let members: [String: JSONValue]
    /// Where the object is in the message, for messages (`mutation 3`).
    public var context: String { describeContext() }
    /// Works the context out when a message needs it: the objects of a page are many, and
    /// building each one's description cost more than reading it.
    private let describeContext: @Sendable () -> String

    /// The members of `value`.
    /// - Throws: ``WireFormatError`` when `value` is not an object.
    public init(_ value: JSONValue, context: String) throws(WireFormatError) {
        try self.init(value, describingContext: { context })
    }

    /// The members of `value`, its context worked out only for an error message.
    init(_ value: JSONValue, describingContext: @escaping @Sendable () -> String) throws(WireFormatError) {
        guard let members = value.objectValue else {
            throw WireFormatError(message: "\(describingContext()) must be a JSON object, not \(value.kindName)")
        }
        self.members = members
        describeContext = describingContext
    }

    /// The members of an object already taken apart.
    public init(members: [String: JSONValue], context: String) {
        self.members = members
        describeContext = { context }
    }

    /// A string member.
    public func string(_ name: WireName) throws(WireFormatError) -> String {
        try required(name, "a string") { $0.stringValue }
    }

    /// An integer literal member (answers).
    public func integer(_ name: WireName) throws(WireFormatError) -> Int64 {
        try required(name, "an integer") { value in
            if case .integer(let integer) = value { return integer }
            return nil
        }
    }

    /// A whole number ≥ 0 (requests); `nil` when absent and `required` is false.
    public func count(_ name: WireName, required: Bool = true) throws(WireFormatError) -> Int64? {
        guard let value = members[name.string] else {
            if required { throw missing(name, "a whole number") }
            return nil
        }
        guard let integer = value.integerValue, integer >= 0 else {
            throw wrong(name, "a whole number of 0 or more", value)
        }
        return integer
    }

    /// A required boolean member.
    public func bool(_ name: WireName) throws(WireFormatError) -> Bool {
        try required(name, "a boolean") { $0.boolValue }
    }

    /// An optional boolean member: `false` when absent.
    public func flag(_ name: WireName) throws(WireFormatError) -> Bool {
        guard let value = members[name.string] else { return false }
        guard let flag = value.boolValue else { throw wrong(name, "true or false", value) }
        return flag
    }

    /// An array member.
    public func array(_ name: WireName) throws(WireFormatError) -> [JSONValue] {
        try required(name, "an array") { $0.arrayValue }
    }

    /// An object member.
    public func object(_ name: WireName) throws(WireFormatError) -> [String: JSONValue] {
        try required(name, "an object") { $0.objectValue }
    }

    /// A row object member: column name → value.
    public func row(_ name: WireName) throws(WireFormatError) -> [String: SyncValue] {
        try SyncValue.row(try object(name), describingContext: "\(JSONWriter.quoted(name.string)) of \(context)")
    }

    /// The member, or `nil` when it is absent or null.
    public func optional(_ name: WireName) -> JSONValue? {
        guard let value = members[name.string], value != .null else { return nil }
        return value
    }

    private func missing(_ name: WireName, _ kind: String) -> WireFormatError {
        WireFormatError(message: "\(context) needs \(JSONWriter.quoted(name.string)) (\(kind))")
    }

    private func wrong(_ name: WireName, _ kind: String, _ value: JSONValue) -> WireFormatError {
        WireFormatError(
            message: "\(JSONWriter.quoted(name.string)) in \(context) must be \(kind), not \(value.kindName)")
    }

    private func required<T>(_ name: WireName, _ kind: String, _ read: (JSONValue) -> T?) throws(WireFormatError)
        -> T
    {
        guard let value = members[name.string] else { throw missing(name, kind) }
        guard let typed = read(value) else { throw wrong(name, kind, value) }
        return typed
    }
}
