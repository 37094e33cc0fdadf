import CSQLite

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Gives the processor to another thread that is ready to run on it, if there is one
/// (`sched_yield`); returns at once otherwise.
///
/// For long background work on a machine with few cores: the threads it wakes (a network
/// request it just started, the answer to one) are often queued on its own core, and wait
/// there until its slice ends, while the other core stays idle. Yielding every few tens of
/// microseconds lets them run first.
package func yieldProcessor() {
    _ = sched_yield()
}

extension Database {
    /// Runs `body` with `callback` called every `instructions` SQLite virtual-machine
    /// instructions of a statement that loops (over rows, or a join), through the connection's
    /// progress handler; the handler is removed when `body` returns or throws.
    ///
    /// SQLite checks the count only where a statement loops, so a statement that writes one row
    /// may never call back; a caller that runs many such statements calls back between them
    /// itself. The callback must not use the connection. The connection has one progress
    /// handler: one set through ``handle`` is replaced for the duration, and gone after.
    /// See <https://www.sqlite.org/c3ref/progress_handler.html>.
    ///
    /// - Throws: ``SerialDBError/Code/closed``, and what `body` throws.
    package func withProgressCallback<T>(
        everyInstructions instructions: Int32, _ callback: @escaping () -> Void, _ body: () throws -> T
    ) throws -> T {
        let handle = try openHandle()
        let box = Unmanaged.passRetained(ProgressCallbackBox(callback))
        sqlite3_progress_handler(
            handle, max(instructions, 1),
            { context in
                guard let context else { return 0 }
                Unmanaged<ProgressCallbackBox>.fromOpaque(context).takeUnretainedValue().callback()
                return 0
            }, box.toOpaque())
        defer {
            // `body` may have closed the connection: its handler went with it.
            if let handle = self.handle { sqlite3_progress_handler(handle, 0, nil, nil) }
            box.release()
        }
        return try body()
    }
}

/// The closure a progress handler calls, passed to SQLite as its context pointer.
private final class ProgressCallbackBox {
    let callback: () -> Void

    init(_ callback: @escaping () -> Void) {
        self.callback = callback
    }
}
