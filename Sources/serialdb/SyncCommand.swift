import Foundation
import SerialDB
import SerialDBSync

/// `serialdb sync DB --server URL --token T [--page-size N]`: syncs a database file by hand and
/// prints the report. Exit status: 0 synced, 1 failed, 2 usage error.
enum SyncCommand {
    static let usage = "usage: serialdb sync DB --server URL --token TOKEN [--page-size ROWS]"

    /// Runs the subcommand and exits.
    static func main(_ arguments: [String]) -> Never {
        let pageSize = value(of: "--page-size", in: arguments).map { Int($0) }
        guard arguments.count == (pageSize == nil ? 5 : 7), let path = arguments.first, pageSize != .some(nil),
            let server = value(of: "--server", in: arguments), let url = URL(string: server), url.scheme != nil,
            let token = value(of: "--token", in: arguments)
        else {
            FileHandle.standardError.write(
                Data("serialdb: sync needs a database, --server and --token\n\(usage)\n".utf8))
            exit(2)
        }
        // The tool's main is synchronous: the sync runs in a task and the main thread waits.
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let queue = try DatabaseQueue(path: path)
                let client = try SyncClient(
                    queue: queue, transport: HTTPSyncTransport(baseURL: url, token: token),
                    pageSize: (pageSize ?? nil) ?? 500)
                outcome.result = .success(describe(try await client.sync()))
                try await queue.close()
            } catch {
                outcome.result = .failure(error)
            }
            done.signal()
        }
        done.wait()
        switch outcome.result {
        case .success(let text):
            print(text)
            exit(0)
        case .failure(let error):
            FileHandle.standardError.write(Data("serialdb: sync failed: \(error)\n".utf8))
            exit(1)
        case nil:
            exit(1)
        }
    }

    /// The result handed from the task to the waiting main thread.
    private final class Outcome: @unchecked Sendable {
        // Safe: written once by the task before it signals the semaphore, read by the main
        // thread only after the wait returns.
        var result: Result<String, any Error>?
    }

    private static func value(of flag: String, in arguments: [String]) -> String? {
        guard let index = arguments.firstIndex(of: flag), index + 1 < arguments.count else { return nil }
        return arguments[index + 1]
    }

    static func describe(_ report: SyncReport) -> String {
        var lines = ["uploaded: \(report.uploaded)", "downloaded: \(report.downloaded)"]
        for change in report.schemaChanges {
            let from = change.fromStructVersion.map(String.init) ?? "none"
            lines.append(
                "schema \(change.table): \(from) -> \(change.toStructVersion)"
                    + (change.isApplied ? "" : " REFUSED: " + change.refusals.joined(separator: " "))
                    + (change.capturedRows > 0 ? " (\(change.capturedRows) rows already here queued for upload)" : ""))
            for dropped in change.droppedValues {
                lines.append(
                    "dropped unsent value \(dropped.table) \(dropped.key) \(dropped.column): \(dropped.value)")
            }
        }
        for table in report.unsyncedTables {
            lines.append("no longer synced \(table): the server stopped serving it; the local table is kept")
        }
        for conflict in report.conflicts {
            lines.append(
                "conflict \(conflict.table) \(conflict.key): local base \(conflict.localBaseVersion), "
                    + "server \(conflict.serverVersion), kept \(conflict.resolution == .keepServer ? "server" : "local")"
            )
        }
        for rejection in report.rejected {
            lines.append(
                "rejected \(rejection.table) \(rejection.key) \(rejection.operation.rawValue): \(rejection.message)")
        }
        return lines.joined(separator: "\n")
    }
}
