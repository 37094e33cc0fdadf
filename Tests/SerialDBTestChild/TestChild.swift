import Foundation
import SerialDB
import SerialDBTestSupport
import ToolArguments

/// A second process for tests.
///
/// - `serialdb-test-child migrate PATH DELAY` opens PATH, prints "ready", waits for a line on
///   standard input (so two children start together), migrates it with the user ladder (each
///   step slowed by DELAY seconds), and prints "done" or the error.
/// - `serialdb-test-child execute PATH SQL` opens PATH, runs SQL (one or several statements),
///   and prints "done" or the error: a schema change made by another process.
/// - `serialdb-test-child sync PATH URL TOKEN PAGE_SIZE PAGES`: see ``ChildSync``.
/// - `serialdb-test-child prepare PATH DELAY [PAUSE_AT]` opens PATH (at step 1 of
///   ``OnlineLadder``), prepares step 2 online in chunks of 50 rows, printing "copied N" after
///   each chunk and resting DELAY seconds; once PAUSE_AT rows are copied it prints "paused" and
///   waits for a line on standard input (between chunks: it holds no lock), so that a test
///   acts at that exact point whatever the machine's load. Then it prints "prepared", waits
///   for a line, and migrates, printing "swapping" just before. When its upgrade swapped the
///   copy in, the block it queued behind the upgrade prints "swapped" and waits for a line.
@main
struct TestChild {
    static let usage =
        "usage: serialdb-test-child migrate PATH DELAY | execute PATH SQL | sync PATH URL TOKEN PAGE_SIZE PAGES"
        + " | prepare PATH DELAY [PAUSE_AT]"

    enum Command {
        case migrate(path: String, delay: Double)
        case execute(path: String, sql: String)
        case sync(path: String, url: URL, token: String, pageSize: Int, pages: Int)
        case prepare(path: String, delay: Double, pauseAt: Int?)
    }

    static func main() {
        let command = ToolArguments.parse(tool: "serialdb-test-child", usage: usage) { reader in
            var operands: [String] = []
            while let argument = try reader.next() {
                guard case .operand(let word) = argument else { throw reader.unexpected(argument) }
                operands.append(word)
            }
            if operands.first == "sync" {
                guard operands.count == 6, let url = URL(string: operands[2]), let pageSize = Int(operands[4]),
                    let pages = Int(operands[5])
                else { throw UsageError("sync needs PATH URL TOKEN PAGE_SIZE PAGES") }
                return Command.sync(path: operands[1], url: url, token: operands[3], pageSize: pageSize, pages: pages)
            }
            if operands.first == "prepare" {
                guard operands.count == 3 || operands.count == 4, let delay = Double(operands[2]) else {
                    throw UsageError("prepare needs PATH DELAY [PAUSE_AT], DELAY in seconds")
                }
                let pauseAt = operands.count == 4 ? Int(operands[3]) : nil
                guard operands.count == 3 || pauseAt != nil else {
                    throw UsageError("prepare's PAUSE_AT is a row count, not `\(operands[3])`")
                }
                return Command.prepare(path: operands[1], delay: delay, pauseAt: pauseAt)
            }
            guard operands.count == 3 else { throw UsageError("needs a command, a path and one more argument") }
            switch operands[0] {
            case "migrate":
                guard let delay = Double(operands[2]) else {
                    throw UsageError("migrate needs a delay in seconds, not `\(operands[2])`")
                }
                return Command.migrate(path: operands[1], delay: delay)
            case "execute":
                return Command.execute(path: operands[1], sql: operands[2])
            default:
                throw UsageError("unknown command `\(operands[0])`")
            }
        }
        do {
            var configuration = Configuration()
            configuration.busyTimeout = .seconds(30)
            switch command {
            case .migrate(let path, let delay):
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                FileHandle.standardOutput.write(Data("ready\n".utf8))
                _ = readLine()
                try queue.migrate(UserLadder.migrator(delayPerStep: delay))
            case .execute(let path, let sql):
                let queue = try DatabaseQueue(path: path, configuration: configuration)
                try queue.inDatabase { db in try db.execute(sql: sql) }
            case .sync(let path, let url, let token, let pageSize, let pages):
                try ChildSync.run(path: path, url: url, token: token, pageSize: pageSize, pages: pages)
            case .prepare(let path, let delay, let pauseAt):
                try prepare(path: path, delay: delay, pauseAt: pauseAt, configuration: configuration)
            }
            FileHandle.standardOutput.write(Data("done\n".utf8))
            exit(ToolArguments.success)
        } catch {
            FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
            exit(ToolArguments.failure)
        }
    }

    /// Prepares the online ladder's step 2, then migrates when told to.
    private static func prepare(path: String, delay: Double, pauseAt: Int?, configuration: Configuration) throws {
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        let migrator = OnlineLadder.migrator()
        let finished = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        Task {
            do {
                let paused = Locked(false)
                try await queue.prepareMigration(migrator, rowsPerChunk: 50) { progress in
                    let copied = progress.completedUnits ?? 0
                    FileHandle.standardOutput.write(Data("copied \(copied)\n".utf8))
                    if let pauseAt, copied >= pauseAt, !paused.withLock({ $0 }) {
                        paused.withLock { $0 = true }
                        FileHandle.standardOutput.write(Data("paused\n".utf8))
                        _ = readLine()
                    }
                    if delay > 0 { Thread.sleep(forTimeInterval: delay) }
                }
            } catch {
                failure.withLock { $0 = error }
            }
            finished.signal()
        }
        finished.wait()
        if let error = failure.withLock({ $0 }) { throw error }
        FileHandle.standardOutput.write(Data("prepared\n".utf8))
        _ = readLine()
        FileHandle.standardOutput.write(Data("swapping\n".utf8))
        let swapped = Locked(false)
        let upgrade = queue.startMigration(migrator) { progress in
            if progress.preparedCopy?.wasUsed == true { swapped.withLock { $0 = true } }
        }
        // Queued behind the upgrade, so ahead of the chunks that drop the old table it set aside:
        // when this process swapped, a kill here finds the swap committed and the old table whole.
        try queue.write { _ in
            guard swapped.withLock({ $0 }) else { return }
            FileHandle.standardOutput.write(Data("swapped\n".utf8))
            _ = readLine()
        }
        try upgrade.wait()
    }
}
