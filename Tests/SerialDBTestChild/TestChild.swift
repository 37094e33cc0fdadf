import Foundation
import SerialDB
import SerialDBTestSupport

/// A second process for tests.
///
/// - `serialdb-test-child migrate PATH DELAY` opens PATH, prints "ready", waits for a line on
///   standard input (so two children start together), migrates it with the user ladder (each
///   step slowed by DELAY seconds), and prints "done" or the error.
/// - `serialdb-test-child execute PATH SQL` opens PATH, runs SQL (one or several statements),
///   and prints "done" or the error: a schema change made by another process.
@main
struct TestChild {
    static let usage = "usage: serialdb-test-child migrate PATH DELAY | execute PATH SQL\n"

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 4 else { fail() }
        do {
            var configuration = Configuration()
            configuration.busyTimeout = .seconds(30)
            switch arguments[1] {
            case "migrate":
                guard let delay = Double(arguments[3]) else { fail() }
                let queue = try DatabaseQueue(path: arguments[2], configuration: configuration)
                FileHandle.standardOutput.write(Data("ready\n".utf8))
                _ = readLine()
                try queue.migrate(UserLadder.migrator(delayPerStep: delay))
            case "execute":
                let queue = try DatabaseQueue(path: arguments[2], configuration: configuration)
                try queue.inDatabase { db in try db.execute(sql: arguments[3]) }
            default:
                fail()
            }
            FileHandle.standardOutput.write(Data("done\n".utf8))
            exit(0)
        } catch {
            FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    private static func fail() -> Never {
        FileHandle.standardError.write(Data(usage.utf8))
        exit(64)
    }
}
