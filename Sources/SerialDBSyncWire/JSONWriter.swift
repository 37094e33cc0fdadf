import Foundation

/// Builds JSON text byte by byte, for both ends of the sync protocol. The server writes its
/// responses directly rather than through `JSONSerialization` (the stored rows are already JSON
/// text and are copied in as they are, which is most of the work a fetch does); the client
/// writes its uploads with it, several times faster than `JSONEncoder`.
public struct JSONWriter: Sendable {
    /// The text written so far, as UTF-8 bytes.
    public private(set) var bytes: [UInt8] = []

    /// A writer with room for `capacity` bytes before it grows.
    public init(capacity: Int = 256) {
        bytes.reserveCapacity(capacity)
    }

    /// Makes room for `count` more bytes, so that writing them does not grow the buffer again.
    public mutating func reserve(_ count: Int) {
        bytes.reserveCapacity(bytes.count + count)
    }

    /// The text written so far.
    public var data: Data { Data(bytes) }

    /// The text written so far, as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    /// Copies text that is JSON syntax already (`{`, `"name":`, `null`).
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Copies text that is already JSON (a stored row).
    public mutating func rawJSON(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// An integer, its digits written straight into the buffer (no String in between: every
    /// mutation and every result has a few).
    public mutating func integer(_ value: Int64) {
        Self.withDecimal(value) { bytes.append(contentsOf: $0) }
    }

    /// `value` in decimal, after `prefix` when there is one, in a buffer on the stack that
    /// `body` reads: the digits of an integer without a String in between (a JSON number, a
    /// canonical key's `I123`). Inlinable: called from the client's module for every row of a
    /// page, an opaque call with its closure cost 500 instructions a row more.
    @inlinable
    package static func withDecimal<Result>(
        _ value: Int64, prefix: UInt8? = nil, _ body: (UnsafeBufferPointer<UInt8>) -> Result
    ) -> Result {
        // A prefix, a sign and 19 digits at most (Int64.min).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { text in
            var start = text.count
            var magnitude = value.magnitude
            repeat {
                start -= 1
                text[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                text[start] = UInt8(ascii: "-")
            }
            if let prefix {
                start -= 1
                text[start] = prefix
            }
            return body(UnsafeBufferPointer(rebasing: text[start...]))
        }
    }

    /// `true` or `false`.
    public mutating func bool(_ value: Bool) {
        if value { raw("true") } else { raw("false") }
    }

    /// A string in quotes, with the characters JSON requires escaped.
    public mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings (names, keys, row text) need no escape: copied whole.
        let needsNoEscape = value.utf8.withContiguousStorageIfAvailable { utf8 in
            !utf8.contains { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }
        }
        if needsNoEscape == true {
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): raw("\\\"")
            case UInt8(ascii: "\\"): raw("\\\\")
            case 0x0A: raw("\\n")
            case 0x0D: raw("\\r")
            case 0x09: raw("\\t")
            case 0..<0x20:
                raw("\\u00")
                let hex: [UInt8] = Array("0123456789abcdef".utf8)
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A double. Swift prints the shortest text that reads back as the same double; an
    /// integral double keeps its ".0", so it reads back as a number, not an integer.
    ///
    /// JSON has no form for infinities and NaN: one is written as `null`, so that the text is
    /// always JSON. A caller that must not lose such a value refuses it before writing (the
    /// sync client does not send the row; the server does not store it).
    public mutating func number(_ double: Double) {
        guard double.isFinite else {
            raw("null")
            return
        }
        bytes.append(contentsOf: "\(double)".utf8)
    }

    /// A column value in the wire encoding: INTEGER → integer, REAL → number (see
    /// ``number(_:)`` for infinities), TEXT → string, NULL → null, BLOB → `{"base64": "..."}`.
    public mutating func value(_ value: SyncValue) {
        switch value {
        case .null: raw("null")
        case .integer(let integer): self.integer(integer)
        case .real(let double): number(double)
        case .text(let text): string(text)
        case .blob(let data):
            raw("{")
            field(.base64)
            string(data.base64EncodedString())
            raw("}")
        }
    }

    /// A member's name, quoted and escaped as ``string(_:)`` writes it, and its colon.
    public mutating func member(_ name: String) {
        string(name)
        raw(":")
    }

    /// A member's name and its colon (`"struct_version":`), after a comma unless it is the
    /// first member of its object (the last byte written is the object's `{`).
    public mutating func field(_ name: WireName) {
        if let last = bytes.last, last != UInt8(ascii: "{") { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        raw(name.text)
        raw("\":")
    }

    /// A JSON value, written back as text (objects with their members sorted by name).
    public mutating func json(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let bool): self.bool(bool)
        case .integer(let integer): self.integer(integer)
        case .number(let double): number(double)
        case .string(let string): self.string(string)
        case .array(let elements):
            raw("[")
            for (index, element) in elements.enumerated() {
                if index > 0 { raw(",") }
                json(element)
            }
            raw("]")
        case .object(let members):
            raw("{")
            for (index, name) in members.keys.sorted().enumerated() {
                if index > 0 { raw(",") }
                string(name)
                raw(":")
                json(members[name]!)
            }
            raw("}")
        }
    }
}

extension JSONWriter {
    /// `text` as a JSON string literal, for messages (`column "title" is NOT NULL`).
    public static func quoted(_ text: String) -> String {
        var writer = JSONWriter(capacity: text.utf8.count + 2)
        writer.string(text)
        return writer.string
    }
}
