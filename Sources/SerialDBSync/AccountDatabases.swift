import Foundation
import SerialDB
import Synchronization

/// One database file per signed-in account, all inside one directory, each behind a writer
/// of type `Writer`: a `DatabaseQueue` unless you say otherwise.
///
/// ```swift
/// let accounts = try AccountDatabases(directory: URL(fileURLWithPath: "Accounts"))
/// let queue = try accounts.open(account: "alice")    // the same queue until closed
/// try await accounts.close(account: "alice")          // waits for her work to finish
///
/// // A pool per account: reads (and observations) run beside the sync's writes.
/// let pools = try AccountDatabases(directory: URL(fileURLWithPath: "Accounts")) { path, configuration in
///     try DatabasePool(path: path, configuration: configuration)
/// }
/// let pool = try pools.open(account: "alice")
/// ```
///
/// Any non-empty account string maps to a file name that stays inside the directory
/// (``AccountDatabases/fileName(forAccount:)``): `../x`, `a/b`, NUL bytes or a 10 kB id cannot
/// reach another file, and two ids never share one, even on a case-insensitive file system.
public final class AccountDatabases<Writer: DatabaseWriter>: Sendable {
    /// The directory that holds the files.
    public let directory: URL
    /// The configuration each database is opened with.
    public let configuration: Configuration

    private let openWriter: @Sendable (_ path: String, _ configuration: Configuration) throws -> Writer
    private let writers = Mutex<[String: Writer]>([:])

    /// Uses `directory`, creating it when missing, and opens each account's file with `open`.
    ///
    /// - Parameters:
    ///   - directory: where the files live.
    ///   - configuration: passed to `open` for every account.
    ///   - open: opens the writer of a file, given its path; called once per account until
    ///     ``close(account:)``, never for two accounts at once.
    /// - Throws: the file system's error when the directory cannot be created.
    public init(
        directory: URL, configuration: Configuration = Configuration(),
        open: @escaping @Sendable (_ path: String, _ configuration: Configuration) throws -> Writer
    ) throws {
        self.directory = directory
        self.configuration = configuration
        openWriter = open
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The account's writer, opening its file on first use; the same writer until ``close(account:)``.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id; `DatabaseError`
    ///   when the file cannot be opened.
    public func open(account: String) throws -> Writer {
        let url = try fileURL(forAccount: account)
        return try writers.withLock { writers in
            if let writer = writers[account] { return writer }
            let writer = try openWriter(url.path, configuration)
            writers[account] = writer
            return writer
        }
    }

    /// Closes the account's writer after the work already submitted to it. Later calls on
    /// that writer (a sync still bound to it included) throw `SerialDBError.Code.closed`
    /// and write nothing anywhere; ``open(account:)`` afterwards opens a new one.
    ///
    /// - Throws: `SerialDBError` from closing.
    public func close(account: String) async throws {
        let writer = writers.withLock { $0.removeValue(forKey: account) }
        try await writer?.close()
    }

    /// The accounts open now.
    public var openAccounts: [String] {
        writers.withLock { Array($0.keys).sorted() }
    }

    /// The file of an account: ``fileName(forAccount:)`` inside ``directory``.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id.
    public func fileURL(forAccount account: String) throws -> URL {
        directory.appendingPathComponent(try AccountFileName.make(forAccount: account), isDirectory: false)
    }
}

extension AccountDatabases where Writer == DatabaseQueue {
    /// Uses `directory`, creating it when missing; each account's file is opened as a
    /// `DatabaseQueue`.
    ///
    /// - Throws: the file system's error when the directory cannot be created.
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws {
        try self.init(directory: directory, configuration: configuration) { path, configuration in
            try DatabaseQueue(path: path, configuration: configuration)
        }
    }

    /// The file name of an account: its UTF-8 bytes percent-encoded, keeping only lowercase
    /// ASCII letters, digits, `-` and `_` (so no `/`, no `..`, no NUL, and no two ids that
    /// differ only in case), plus `.sqlite`. An encoding longer than 120 characters becomes
    /// its first 60 characters, `~`, and the SHA-256 of the id: never longer than 190.
    ///
    /// The name is the same whatever `Writer` is (``fileURL(forAccount:)`` answers for any);
    /// it is declared here so that `AccountDatabases.fileName(forAccount:)` needs no type argument.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id.
    public static func fileName(forAccount account: String) throws -> String {
        try AccountFileName.make(forAccount: account)
    }
}
