import CSQLite

#if canImport(Darwin)
    import Darwin
#elseif canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Tells whether some process is still copying a table online, so that opening the file can
/// remove a copy a killed process left unfinished without pulling one from under a live copy.
///
/// Each process holds a shared advisory lock (`flock`) on `<database file>-serialdb-copy` for
/// as long as it copies (`prepareMigration`, or `migrate` finishing a copy). The open takes it
/// exclusively, without waiting: it gets it only when no connection anywhere, this process's
/// other connections included, holds it. The kernel releases the lock of a process that dies,
/// however it dies. The file is created by the first copy and left in place (removing a lock
/// file safely needs more than it saves); it stays empty.
/// See <https://man7.org/linux/man-pages/man2/flock.2.html>.
final class OnlineCopyLease: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Holds the lease shared while `db`'s process copies (waiting while an open holds it
    /// exclusively, which lasts one short transaction). Nil when the database has no file, or
    /// the lock file cannot be created (read-only directory): then an open cannot take the
    /// lease either, and never removes a copy.
    static func shared(for db: Database) -> OnlineCopyLease? {
        lock(db, LOCK_SH)
    }

    /// The lease exclusively, or nil when a process holds it (or there is no lock file to take).
    static func exclusive(for db: Database) -> OnlineCopyLease? {
        lock(db, LOCK_EX | LOCK_NB)
    }

    private static func lock(_ db: Database, _ operation: Int32) -> OnlineCopyLease? {
        guard let handle = db.handle, let name = sqlite3_db_filename(handle, "main"), name.pointee != 0 else {
            return nil
        }
        let descriptor = open(String(cString: name) + "-serialdb-copy", O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        var result: Int32
        repeat {
            result = flock(descriptor, operation)
        } while result != 0 && errno == EINTR
        guard result == 0 else {
            close(descriptor)
            return nil
        }
        return OnlineCopyLease(descriptor: descriptor)
    }
}
