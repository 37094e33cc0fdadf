/// A bad command line: the message says what is wrong; the usage text follows it.
struct UsageError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
