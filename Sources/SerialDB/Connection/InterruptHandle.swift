import CSQLite

/// What another thread may do to a connection while it runs: interrupt it. The connection
/// layer hands it out (``Database/interruptHandle``) so that the layers above never hold a raw
/// `sqlite3*` themselves.
///
/// `@unchecked Sendable` is safe: the pointer is only passed to `sqlite3_interrupt`, which
/// SQLite documents as safe to call from any thread while the connection is open. Whoever
/// keeps a handle must drop it before the connection closes (``Database`` calls its `willClose`
/// hook first, so a queue or pool can forget it under its lock).
/// See <https://www.sqlite.org/c3ref/interrupt.html>.
struct InterruptHandle: @unchecked Sendable {
    private let pointer: OpaquePointer

    init(_ pointer: OpaquePointer) {
        self.pointer = pointer
    }

    /// Makes the running statement fail with `SQLITE_INTERRUPT` as soon as possible.
    func interrupt() {
        sqlite3_interrupt(pointer)
    }
}
