import Foundation
import SerialDB
import SerialDBSync
import ToolArguments

/// `serialdb sync DB --server URL --token T [--page-size N]`: syncs a database file by hand and
/// prints the report. Exit status: 0 synced, 1 failed, 2 usage error (see ``ToolArguments``).
struct SyncCommand {
    let path: String
    let url: URL
    let token: String
    var pageSize = SyncLimits.defaultPageSize

    /// Reads `DB --server URL --token T [--page-size N]`.
    /// - Throws: ``UsageError`` naming what is wrong.
    init(_ reader: inout ArgumentReader) throws {
        var operands: [String] = []
        var url: URL?
        var token: String?
        while let argument = try reader.next() {
            switch argument {
            case .operand(let word): operands.append(word)
            case .option("--server"):
                let server: URL = try reader.value("a URL such as http://127.0.0.1:8080") { text in
                    URL(string: text).flatMap { $0.scheme == nil ? nil : $0 }
                }
                url = server
            case .option("--token"): token = try reader.value()
            case .option("--page-size"): pageSize = try reader.wholeNumber(atLeast: 1)
            default: throw reader.unexpected(argument)
            }
        }
        guard let path = operands.first else { throw UsageError("sync needs a database path") }
        guard operands.count == 1 else { throw UsageError("unexpected argument `\(operands[1])`") }
        guard let url else { throw UsageError("sync needs --server URL") }
        guard let token else { throw UsageError("sync needs --token TOKEN") }
        self.path = path
        self.url = url
        self.token = token
    }

    /// Syncs and exits.
    func run() -> Never {
        // The tool's main is synchronous: the sync runs in a task and the main thread waits.
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let (path, url, token, pageSize) = (path, url, token, pageSize)
        Task {
            do {
                let queue = try DatabaseQueue(path: path)
                let client = try SyncClient(
                    queue: queue, transport: HTTPSyncTransport(baseURL: url, token: token), pageSize: pageSize)
                outcome.result = .success(Self.describe(try await client.sync()))
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
            exit(ToolArguments.success)
        case .failure(let error):
            FileHandle.standardError.write(Data("serialdb: sync failed: \(error)\n".utf8))
            exit(ToolArguments.failure)
        case nil:
            exit(ToolArguments.failure)
        }
    }

    /// The result handed from the task to the waiting main thread.
    private final class Outcome: @unchecked Sendable {
        // Safe: written once by the task before it signals the semaphore, read by the main
        // thread only after the wait returns.
        var result: Result<String, any Error>?
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
