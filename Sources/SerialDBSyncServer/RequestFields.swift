import SerialDBSyncWire

/// The members of a JSON object in a request, read with 400 messages that name what is missing
/// or of the wrong kind.
struct RequestFields {
    let members: [String: JSONValue]
    /// Where the object is in the request, for messages (`mutation 3`).
    let context: String

    init(_ value: JSONValue, context: String) throws(SyncRequestError) {
        guard let members = value.objectValue else {
            throw .badRequest("\(context) must be a JSON object, not \(value.kindName)")
        }
        self.members = members
        self.context = context
    }

    private func missing(_ name: String, _ kind: String) -> SyncRequestError {
        .badRequest("\(context) needs \(JSONWriter.quoted(name)) (\(kind))")
    }

    private func wrong(_ name: String, _ kind: String, _ value: JSONValue) -> SyncRequestError {
        .badRequest("\(JSONWriter.quoted(name)) in \(context) must be \(kind), not \(value.kindName)")
    }

    func string(_ name: String) throws(SyncRequestError) -> String {
        guard let value = members[name] else { throw missing(name, "a string") }
        guard let string = value.stringValue else { throw wrong(name, "a string", value) }
        return string
    }

    /// A whole number ≥ 0; `nil` when absent and `required` is false.
    func count(_ name: String, required: Bool = true) throws(SyncRequestError) -> Int64? {
        guard let value = members[name] else {
            if required { throw missing(name, "a whole number") }
            return nil
        }
        guard let integer = value.integerValue, integer >= 0 else {
            throw wrong(name, "a whole number of 0 or more", value)
        }
        return integer
    }

    /// A boolean; `false` when absent.
    func flag(_ name: String) throws(SyncRequestError) -> Bool {
        guard let value = members[name] else { return false }
        guard let flag = value.boolValue else { throw wrong(name, "true or false", value) }
        return flag
    }

    func array(_ name: String) throws(SyncRequestError) -> [JSONValue] {
        guard let value = members[name] else { throw missing(name, "an array") }
        guard let array = value.arrayValue else { throw wrong(name, "an array", value) }
        return array
    }

    func object(_ name: String) throws(SyncRequestError) -> [String: JSONValue] {
        guard let value = members[name] else { throw missing(name, "an object") }
        guard let object = value.objectValue else { throw wrong(name, "an object", value) }
        return object
    }
}
