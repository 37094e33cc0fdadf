/// Why one mutation was refused: it is answered `"rejected"` with this message, and the rest
/// of the request goes on.
struct SyncRejection: Error, Sendable {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
