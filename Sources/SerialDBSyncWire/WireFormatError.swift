/// JSON that parsed but is not the shape the protocol fixes (a missing field, a string where a
/// number belongs), naming the field.
struct WireFormatError: Error, Sendable, CustomStringConvertible {
    let message: String

    var description: String { message }
}
