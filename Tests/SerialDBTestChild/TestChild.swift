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
@main
struct TestChild {
    static let usage =
        "usage: serialdb-test-child migrate PATH DELAY | execute PATH SQL | sync PATH URL TOKEN PAGE_SIZE PAGES"

    enum Command {
        case migrate(path: String, delay: Double)
        case execute(path: String, sql: String)
        case sync(path: String, url: URL, token: String, pageSize: Int, pages: Int)
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
            }
            FileHandle.standardOutput.write(Data("done\n".utf8))
            exit(ToolArguments.success)
        } catch {
            FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
            exit(ToolArguments.failure)
        }
    }
}
