import Dispatch
import Foundation
import SerialDB

/// N writer threads insert rows through one queue; each writer logs the writes SerialDB
/// acknowledged. Afterwards the table must hold exactly the acknowledged writes: none lost,
/// none duplicated, none that nobody acknowledged.
struct ConcurrentWritersScenario {
    let writers: Int
    let writesPerWriter: Int

    func run() throws -> Bool {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("serialdb-stress-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("stress.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE event(writer INTEGER NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL, PRIMARY KEY(writer, seq))"
            )
        }
        let acknowledged = (0..<writers).map { _ in AcknowledgementLog() }
        let clock = ContinuousClock()
        let start = clock.now
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            for sequence in 0..<writesPerWriter {
                do {
                    try queue.write { db in
                        try db.execute(
                            sql: "INSERT INTO event(writer, seq, payload) VALUES (?, ?, ?)",
                            arguments: [writer, sequence, "w\(writer)-s\(sequence)"])
                    }
                    acknowledged[writer].record(sequence)
                } catch {
                    acknowledged[writer].fail(error)
                }
            }
        }
        let elapsed = clock.now - start
        try queue.close()

        // Verify on a fresh connection, as a reader after a restart would.
        let reader = try DatabaseQueue(path: path)
        let stored = try reader.read { db in
            try db.fetchAll(Row.self, sql: "SELECT writer, seq, payload FROM event")
        }
        var found = Set<Int>()
        var duplicated = 0
        var wrongPayload = 0
        for row in stored {
            let writer: Int = try row.decode(at: 0)
            let sequence: Int = try row.decode(at: 1)
            let payload: String = try row.decode(at: 2)
            if !found.insert(writer * writesPerWriter + sequence).inserted { duplicated += 1 }
            if payload != "w\(writer)-s\(sequence)" { wrongPayload += 1 }
        }
        var expected = Set<Int>()
        var errors: [String] = []
        for (writer, log) in acknowledged.enumerated() {
            for sequence in log.sequences { expected.insert(writer * writesPerWriter + sequence) }
            errors += log.errors
        }
        let lost = expected.subtracting(found).count
        let unexpected = found.subtracting(expected).count
        let total = writers * writesPerWriter
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let checks: [(String, Bool)] = [
            ("every write acknowledged (\(expected.count) of \(total))", expected.count == total),
            ("no acknowledged write lost (\(lost) lost)", lost == 0),
            ("no write stored twice (\(duplicated) duplicated)", duplicated == 0),
            ("no unacknowledged write stored (\(unexpected) unexpected)", unexpected == 0),
            ("every payload intact (\(wrongPayload) wrong)", wrongPayload == 0),
            ("no write failed (\(errors.count) errors)", errors.isEmpty),
        ]
        print(
            "concurrent writers: \(writers) threads × \(writesPerWriter) write transactions through one DatabaseQueue")
        print(String(format: "  %.2f s, %.0f transactions/s", seconds, Double(total) / seconds))
        for (name, passed) in checks {
            print("  \(passed ? "PASS" : "FAIL")  \(name)")
        }
        for error in errors.prefix(5) { print("  error: \(error)") }
        return checks.allSatisfy(\.1)
    }
}

/// What one writer saw acknowledged. Each writer thread owns its log; the lock only makes the
/// hand-over to the checking thread explicit.
final class AcknowledgementLog: @unchecked Sendable {
    // Safe: every access goes through `lock`.
    private let lock = NSLock()
    private var acknowledged: [Int] = []
    private var failures: [String] = []

    func record(_ sequence: Int) {
        lock.withLock { acknowledged.append(sequence) }
    }

    func fail(_ error: any Error) {
        lock.withLock { failures.append("\(error)") }
    }

    var sequences: [Int] { lock.withLock { acknowledged } }
    var errors: [String] { lock.withLock { failures } }
}
