import Foundation
import SerialDB
import SerialDBTestSupport

/// A second process for tests: `serialdb-test-child migrate PATH DELAY` opens PATH, prints
/// "ready", waits for a line on standard input (so two children start together), migrates it
/// with the user ladder (each step slowed by DELAY seconds), and prints "done" or the error.
@main
struct TestChild {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count == 4, arguments[1] == "migrate", let delay = Double(arguments[3]) else {
            FileHandle.standardError.write(Data("usage: serialdb-test-child migrate PATH DELAY\n".utf8))
            exit(64)
        }
        do {
            var configuration = Configuration()
            configuration.busyTimeout = .seconds(30)
            let queue = try DatabaseQueue(path: arguments[2], configuration: configuration)
            FileHandle.standardOutput.write(Data("ready\n".utf8))
            _ = readLine()
            try queue.migrate(UserLadder.migrator(delayPerStep: delay))
            FileHandle.standardOutput.write(Data("done\n".utf8))
            exit(0)
        } catch {
            FileHandle.standardOutput.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
