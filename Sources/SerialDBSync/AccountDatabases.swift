import Foundation
import SerialDB
import Synchronization

/// One database file per signed-in account, all inside one directory.
///
/// ```swift
/// let accounts = try AccountDatabases(directory: URL(fileURLWithPath: "Accounts"))
/// let queue = try accounts.open(account: "alice")    // the same queue until closed
/// try await accounts.close(account: "alice")          // waits for her work to finish
/// ```
///
/// Any non-empty account string maps to a file name that stays inside the directory
/// (``fileName(forAccount:)``): `../x`, `a/b`, NUL bytes or a 10 kB id cannot reach
/// another file, and two ids never share one, even on a case-insensitive file system.
public final class AccountDatabases: Sendable {
    /// The directory that holds the files.
    public let directory: URL
    /// The configuration each database is opened with.
    public let configuration: Configuration

    private let queues = Mutex<[String: DatabaseQueue]>([:])

    /// Uses `directory`, creating it when missing.
    ///
    /// - Throws: the file system's error when the directory cannot be created.
    public init(directory: URL, configuration: Configuration = Configuration()) throws {
        self.directory = directory
        self.configuration = configuration
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The account's queue, opening its file on first use; the same queue until ``close(account:)``.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id; `DatabaseError`
    ///   when the file cannot be opened.
    public func open(account: String) throws -> DatabaseQueue {
        let url = try fileURL(forAccount: account)
        return try queues.withLock { queues in
            if let queue = queues[account] { return queue }
            let queue = try DatabaseQueue(path: url.path, configuration: configuration)
            queues[account] = queue
            return queue
        }
    }

    /// Closes the account's queue after the work already submitted to it. Later calls on
    /// that queue (a sync still bound to it included) throw `SerialDBError.Code.closed`
    /// and write nothing anywhere; ``open(account:)`` afterwards opens a new queue.
    ///
    /// - Throws: `SerialDBError` from closing.
    public func close(account: String) async throws {
        let queue = queues.withLock { $0.removeValue(forKey: account) }
        try await queue?.close()
    }

    /// The accounts open now.
    public var openAccounts: [String] {
        queues.withLock { Array($0.keys).sorted() }
    }

    /// The file of an account: ``fileName(forAccount:)`` inside ``directory``.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id.
    public func fileURL(forAccount account: String) throws -> URL {
        directory.appendingPathComponent(try Self.fileName(forAccount: account), isDirectory: false)
    }

    /// The file name of an account: its UTF-8 bytes percent-encoded, keeping only lowercase
    /// ASCII letters, digits, `-` and `_` (so no `/`, no `..`, no NUL, and no two ids that
    /// differ only in case), plus `.sqlite`. An encoding longer than 120 characters becomes
    /// its first 60 characters, `~`, and the SHA-256 of the id: never longer than 190.
    ///
    /// - Throws: ``SyncError/Code/invalidAccount`` for an empty id.
    public static func fileName(forAccount account: String) throws -> String {
        guard !account.isEmpty else {
            throw SyncError(.invalidAccount, "An account id cannot be empty; pass the signed-in user's id.")
        }
        let hexDigits = Array("0123456789ABCDEF")
        var encoded = ""
        var cut = 0
        for byte in account.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "_"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += "%" + String(hexDigits[Int(byte >> 4)]) + String(hexDigits[Int(byte & 0xf)])
            }
            if encoded.count <= 60 { cut = encoded.count }
        }
        if encoded.count > 120 {
            // Cut at a whole byte's encoding; the digest tells long ids apart.
            encoded = String(encoded.prefix(cut)) + "~" + SHA256.hex(Array(account.utf8))
        }
        return encoded + ".sqlite"
    }
}
