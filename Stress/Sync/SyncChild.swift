import Foundation
import SerialDB
import SerialDBSync
import ToolArguments

/// One sync of a device's database in a child process (hidden subcommand `sync-child`), which
/// the parent may SIGKILL in the middle of it, as an app killed while syncing.
///
/// Standard output: `syncing` when the database is open and the sync starts; `conflict ID` for
/// each conflict, printed by the resolver inside the transaction that settles it (before that
/// transaction commits, so a conflict the kill rolled back is reported twice, never not at all:
/// its seq is sent again and answered the same way); then `synced`, `server down` (a network
/// error: the server was killed), or `failed MESSAGE` for any other error.
enum SyncChild {
    static let subcommand = "sync-child"

    /// The command line the parent passes.
    static func arguments(database: String, url: URL, token: String) -> [String] {
        [subcommand, "--db", database, "--url", url.absoluteString, "--token", token]
    }

    /// Runs one sync and returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let values = try? ArgumentReader.optionValues(arguments), let path = values["--db"],
            let url = values["--url"].flatMap(URL.init(string:)),
            let token = values["--token"]
        else {
            Console.error("stress \(subcommand): bad arguments \(arguments)")
            return ToolArguments.usageStatus
        }
        do {
            let queue = try DatabaseQueue(path: path)
            let client = try SyncClient(
                queue: queue, transport: HTTPSyncTransport(baseURL: url, token: token),
                conflictResolver: { conflict in
                    Console.line("conflict \(SyncDevice.keyText(conflict.key))")
                    return .keepServer
                })
            Console.line("syncing")
            let outcome = SyncDevice.blockingSync(client)
            switch outcome {
            case .success: Console.line("synced")
            case .failure(let error) where SyncError.Code.network ~= error: Console.line("server down")
            case .failure(let error): Console.line("failed \(error)".replacingOccurrences(of: "\n", with: " "))
            }
            try queue.close()
            return 0
        } catch {
            Console.line("failed \(error)".replacingOccurrences(of: "\n", with: " "))
            return 1
        }
    }
}
