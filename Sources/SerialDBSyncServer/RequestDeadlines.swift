import Foundation

/// Closes the connections whose request takes too long to arrive, or whose answer takes too
/// long to be read: libmicrohttpd's own timeout counts only idleness, so a client sending one
/// byte now and then would keep a connection (and what it buffered) for ever.
///
/// Each connection has a deadline: set when it opens, again when an answer is queued (for
/// sending it) and when a request completes (for the next one on a kept-alive connection),
/// and lifted while the server works on a request. One thread wakes at the earliest deadline
/// and shuts down the socket of every connection past its own; libmicrohttpd then sees the
/// connection end and closes it as usual.
final class RequestDeadlines: @unchecked Sendable {
    // Safe to share: `timeout` is immutable; everything else is behind `condition`. A socket
    // is shut down only while its connection is in `clocks`, and libmicrohttpd reports a
    // connection closed (removing it) before it closes the socket, so the number can never
    // belong to another connection by then.

    /// One connection: its socket and when it must be done (`nil`: the server is working).
    private struct Clock {
        let socket: Int32
        var deadline: ContinuousClock.Instant?
    }

    private let timeout: Duration
    private let condition = NSCondition()
    private var clocks: [UInt: Clock] = [:]
    private var running = true
    private var exited = false

    /// Starts the watching thread.
    init(timeout: Duration) {
        self.timeout = timeout
        Thread.detachNewThread { [self] in watch() }
    }

    /// A connection opened on `socket`: its first request must arrive within the timeout.
    func opened(_ connection: OpaquePointer, socket: Int32) {
        guard socket >= 0 else { return }
        condition.withLock { clocks[Self.key(connection)] = Clock(socket: socket, deadline: .now + timeout) }
    }

    /// The connection gets the whole timeout again, from now.
    func restart(_ connection: OpaquePointer?) {
        condition.withLock { clocks[Self.key(connection)]?.deadline = .now + timeout }
    }

    /// The server works on the connection's request: no deadline until it answers.
    func pause(_ connection: OpaquePointer?) {
        condition.withLock { clocks[Self.key(connection)]?.deadline = nil }
    }

    /// The connection is closed: forget it (before its socket is closed).
    func closed(_ connection: OpaquePointer?) {
        condition.withLock { _ = clocks.removeValue(forKey: Self.key(connection)) }
    }

    /// Stops the watching thread and waits for it to end.
    func stop() {
        condition.withLock {
            running = false
            condition.broadcast()
            while !exited { condition.wait() }
        }
    }

    private static func key(_ connection: OpaquePointer?) -> UInt {
        UInt(bitPattern: connection.map { Int(bitPattern: UnsafeRawPointer($0)) } ?? 0)
    }

    private func watch() {
        condition.withLock {
            while running {
                let now = ContinuousClock.now
                var wake = now + timeout
                for (key, clock) in clocks {
                    guard let deadline = clock.deadline else { continue }
                    if deadline <= now {
                        // Both directions: a read or write in progress on it fails, and
                        // libmicrohttpd closes the connection.
                        shutdown(clock.socket, Int32(SHUT_RDWR))
                        clocks[key]?.deadline = nil
                    } else {
                        wake = min(wake, deadline)
                    }
                }
                // Not more often than ten times a second, however many deadlines there are.
                let seconds = max(0.1, Self.seconds(wake - now))
                _ = condition.wait(until: Date().addingTimeInterval(seconds))
            }
            exited = true
            condition.broadcast()
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
