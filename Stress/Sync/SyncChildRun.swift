import Foundation
import HarnessSupport

/// One sync of a device run in a child process (``SyncChild``), SIGKILLed after `killAfter`
/// seconds when given. The conflicts it prints go into the device's ledger as they arrive; a
/// failure other than the server being down comes back as its line.
enum SyncChildRun {
    /// Runs the child to its end or its kill; returns whether it finished its sync, whether
    /// our kill ended it, and what went wrong otherwise (a `failed` line, a crash).
    static func run(
        _ device: SyncDevice, url: URL, executable: URL, killAfter: Double?
    ) throws -> (synced: Bool, killed: Bool, failure: String?) {
        let process = Process()
        let output = Pipe()
        process.executableURL = executable
        process.arguments = SyncChild.arguments(database: device.path, url: url, token: device.token)
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try? output.fileHandleForWriting.close()
        let reader = output.fileHandleForReading
        let ended = DispatchSemaphore(value: 0)
        let syncing = DispatchSemaphore(value: 0)
        let synced = Locked(false)
        let failure = Locked<String?>(nil)
        Thread {
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                guard let lastNewline = pending.lastIndex(of: 10) else { continue }
                for line in String(decoding: pending[pending.startIndex..<lastNewline], as: UTF8.self).split(
                    separator: "\n")
                {
                    if line.hasPrefix("conflict ") {
                        let key = String(line.dropFirst("conflict ".count))
                        device.ledger.withLock { $0.recordConflict(key: key) }
                    } else if line == "syncing" {
                        syncing.signal()
                    } else if line == "synced" {
                        synced.withLock { $0 = true }
                    } else if line.hasPrefix("failed ") {
                        failure.withLock { $0 = String(line) }
                    }
                }
                pending = Data(pending[(lastNewline + 1)...])
            }
            syncing.signal()
            ended.signal()
        }.start()
        var killed = false
        if let killAfter {
            // Counted from the start of the sync, not of the process: the kill lands in the
            // sync, not in the start-up. A child that ends before it says so is not waited for.
            _ = syncing.wait(timeout: .now() + 10)
            Thread.sleep(forTimeInterval: killAfter)
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                killed = true
            }
        }
        process.waitUntilExit()
        ended.wait()
        let signalled = process.terminationReason == .uncaughtSignal
        if signalled && !killed {
            // Not our SIGKILL: the child crashed (a trap in the library, say).
            failure.withLock { $0 = $0 ?? "crashed with signal \(process.terminationStatus)" }
        }
        return (synced.withLock { $0 }, killed && signalled, failure.withLock { $0 })
    }
}
