import Foundation
import HarnessSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A process started with `posix_spawn`, and its end once it has been reaped: what
/// ``ChildProcess`` runs on, in place of Foundation's `Process`.
///
/// Not `Process`, because on Linux `Process.run()` finds the descriptors to close in the child
/// by reading `/proc/self/fd` with a loop that copies each entry's whole 256-byte name field
/// out of the directory buffer. With more than about 1,350 descriptors open (the suites run
/// a hundred servers, their connections and their children at once) the last entry of a full
/// buffer lies less than 256 bytes from its end, the copy reads past it, and when the buffer
/// ends a mapped region the test process dies of a segmentation fault in `memmove`
/// (AddressSanitizer names the read: a heap-buffer-overflow in
/// `findMaximumOpenFromProcSelfFD`). Here the child closes every descriptor above standard
/// error itself (`posix_spawn_file_actions_addclosefrom_np` on Linux,
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` on Apple platforms), whatever their number.
///
/// The child gets its own process group, as with `Process`, and an empty signal mask: a test
/// that spawns from a Dispatch thread does not pass on the signals that thread blocks.
///
/// Only this object reaps the child (`waitpid` on its own pid), and it sends a signal only
/// while the child is not reaped, under the same lock: a signal can never reach another
/// process that was given the pid after the child's end.
final class SpawnedProcess: @unchecked Sendable {
    // Safe to share: `pid` is immutable; `status` is read and written only with `lock` held.
    let pid: pid_t
    private let lock = NSLock()
    /// The raw `waitpid` status, once reaped.
    private var status: Int32?

    /// Starts `path` with `arguments` (the program's name first) and `environment`, its
    /// standard input, output and error the given descriptors (which stay open here).
    ///
    /// - Throws: ``ChildProcessError`` when the process cannot be started.
    init(
        path: String, arguments: [String], environment: [String: String], standardInput: Int32,
        standardOutput: Int32, standardError: Int32
    ) throws {
        #if canImport(Darwin)
            var actions: posix_spawn_file_actions_t?
            var attributes: posix_spawnattr_t?
        #else
            var actions = posix_spawn_file_actions_t()
            var attributes = posix_spawnattr_t()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        posix_spawn_file_actions_adddup2(&actions, standardError, 2)
        var flags = Int32(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK)
        flags |= SpawnActions.closingFlags
        #if !canImport(Darwin)
            if let failure = SpawnActions.closeDescriptorsAboveStandardError(&actions) {
                throw ChildProcessError(message: "cannot start \(path): \(failure)")
            }
        #endif
        posix_spawnattr_setflags(&attributes, Int16(flags))
        posix_spawnattr_setpgroup(&attributes, 0)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard code == 0 else {
            throw ChildProcessError(message: "cannot start \(path): \(String(cString: strerror(code)))")
        }
        self.pid = pid
    }

    deinit {
        // Reaped by a thread of its own if it is still running: the caller killed it, and a
        // child never waited for would stay a zombie until the test process ends.
        if isRunning {
            let pid = self.pid
            Thread.detachNewThread {
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
            }
        }
    }

    /// Whether the child has not ended yet (reaping it if it has).
    var isRunning: Bool {
        lock.withLock { reapIfEnded() == nil }
    }

    /// How it ended: its exit code, or the number of the signal that ended it (as `Process`
    /// reports it); `nil` while it runs.
    var terminationStatus: Int32? {
        lock.withLock {
            reapIfEnded().map { raw in
                let signal = raw & 0x7f
                return signal == 0 ? (raw >> 8) & 0xff : signal
            }
        }
    }

    /// Sends `signal` unless the child has been reaped.
    func signal(_ number: Int32) {
        lock.withLock {
            if reapIfEnded() == nil { kill(pid, number) }
        }
    }

    /// The raw status, reaping the child if it ended since the last look. Called with `lock` held.
    private func reapIfEnded() -> Int32? {
        if let status { return status }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &raw, WNOHANG) } while result == -1 && errno == EINTR
        // Stopped or continued children are not reported without WUNTRACED/WCONTINUED: a
        // result of `pid` is always an end.
        if result == pid {
            status = raw
        } else if result == -1 && errno == ECHILD {
            // Not a child of this process any more: someone else reaped it. Taken as an end
            // with exit code 255, so that no wait for it lasts until its timeout.
            status = 255 << 8
        }
        return status
    }
}
