import Foundation

/// Reads a child's pipe to its end on a thread of its own, with blocking reads, and keeps what
/// it read.
///
/// Not `FileHandle.readabilityHandler`: that installs a libdispatch read source on the pipe,
/// and tearing such sources down from several threads at once (parallel tests starting and
/// stopping children) corrupts libdispatch's epoll bookkeeping on Linux, which crashed the test
/// process in `_dispatch_event_loop_drain`
/// (https://github.com/swiftlang/swift-corelibs-libdispatch/issues/949). A blocking read never
/// registers the descriptor with libdispatch; the end of the pipe ends the thread.
public final class PipeReader: @unchecked Sendable {
    // Safe to share: `bytes` and `ended` are behind `lock`; the thread only appends, then sets
    // `ended` once.
    private let lock = NSLock()
    private var bytes = Data()
    private var ended = false

    /// Starts reading `handle` (a pipe's read end) until the writer closes it.
    public init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            while true {
                // Blocks until data arrives; empty at the end of the pipe.
                let data = handle.availableData
                if data.isEmpty { break }
                lock.withLock { bytes.append(data) }
            }
            lock.withLock { ended = true }
        }
        thread.name = "PipeReader"
        thread.start()
    }

    /// Everything read so far, as UTF-8 text.
    public var text: String { lock.withLock { String(decoding: bytes, as: UTF8.self) } }

    /// Whether the writer closed the pipe (every writer: a child's own children may hold it).
    public var isFinished: Bool { lock.withLock { ended } }
}
