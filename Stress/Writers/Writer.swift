import Foundation
import HarnessSupport
import SerialDB

/// One writer: submits its operations one at a time through the shared queue, from its own
/// thread or task, and reports each outcome to its sink after the write call returned.
final class Writer: Sendable {
    /// How long a writer runs.
    struct Budget: Sendable {
        /// Stop after this many writes (`nil`: until the control says stop).
        var total: Int?
        /// After this many writes, wait until the upgrade has started (`nil`: never wait).
        var pauseAfter: Int?
    }

    let index: Int
    let author: Int
    private let generator: Locked<OperationGenerator>
    private let sink: any AcknowledgementSink
    private let budget: Budget
    private let broken: BrokenWriterMode?

    init(
        index: Int, generator: OperationGenerator, sink: any AcknowledgementSink, budget: Budget,
        broken: BrokenWriterMode?
    ) {
        self.index = index
        author = generator.author
        self.generator = Locked(generator)
        self.sink = sink
        self.budget = budget
        self.broken = broken
    }

    /// The loop of a writer thread. Synchronous on purpose: `queue.write` here is the blocking
    /// overload, the one threads use.
    func runOnThread(target: LoadTarget, control: LoadControl, clock: RunClock) {
        var done = 0
        while !isFinished(done, control) {
            if done == budget.pauseAfter {
                control.countPausedWriter()
                while !control.hasUpgradeStarted && !control.isStopped { Thread.sleep(forTimeInterval: 0.001) }
            }
            let operation = generator.withLock { $0.next() }
            let newSchema = control.hasUpgradeStarted
            let submitted = clock.now
            do {
                let steps = try writeBlocking(operation, newSchema: newSchema, target: target)
                if broken == .forgetAcknowledgement && broken?.applies(toWriter: index, operation) == true {
                    sink.failed(
                        WriteFailure(
                            operation: operation.id, refusedByFailedUpgrade: false,
                            message: "broken writer: committed, reported as failed"))
                } else {
                    report(operation, steps: steps, newSchema: newSchema, submitted: submitted, clock: clock)
                }
            } catch {
                sink.failed(WriteFailure(operation: operation.id, error: error))
                // A queue that refuses work refuses it at once: do not spin on it.
                Thread.sleep(forTimeInterval: 0.001)
            }
            done += 1
        }
    }

    /// The loop of a writer task: the same as a thread's, through the async overloads.
    func runAsTask(target: LoadTarget, control: LoadControl, clock: RunClock) async {
        var done = 0
        while !isFinished(done, control) {
            if done == budget.pauseAfter {
                control.countPausedWriter()
                while !control.hasUpgradeStarted && !control.isStopped { try? await Task.sleep(for: .milliseconds(1)) }
            }
            let operation = generator.withLock { $0.next() }
            let newSchema = control.hasUpgradeStarted
            let submitted = clock.now
            do {
                let steps = try await target.write { db in
                    try ItemTable.perform(operation, newSchema: newSchema, in: db)
                }
                report(operation, steps: steps, newSchema: newSchema, submitted: submitted, clock: clock)
            } catch {
                sink.failed(WriteFailure(operation: operation.id, error: error))
                try? await Task.sleep(for: .milliseconds(1))
            }
            done += 1
        }
    }

    private func isFinished(_ done: Int, _ control: LoadControl) -> Bool {
        if let total = budget.total, done >= total { return true }
        return control.isStopped
    }

    private func report(_ operation: WriteOperation, steps: Int, newSchema: Bool, submitted: Double, clock: RunClock) {
        let returned = clock.now
        generator.withLock { $0.acknowledged(operation) }
        sink.acknowledged(
            Acknowledgement(
                operation: operation, seenSteps: steps, afterUpgradeStart: newSchema, submitted: submitted,
                returned: returned))
    }

    private func writeBlocking(_ operation: WriteOperation, newSchema: Bool, target: LoadTarget) throws -> Int {
        guard let broken, broken.applies(toWriter: index, operation) else {
            return try target.write { db in try ItemTable.perform(operation, newSchema: newSchema, in: db) }
        }
        switch broken {
        case .forgetAcknowledgement:
            return try target.write { db in try ItemTable.perform(operation, newSchema: newSchema, in: db) }
        case .skipCommit:
            var steps = 0
            try target.inTransaction(.immediate) { db in
                steps = try ItemTable.perform(operation, newSchema: newSchema, in: db)
                return .rollback
            }
            return steps
        case .duplicate:
            return try target.write { db in try ItemTable.perform(operation, newSchema: newSchema, times: 2, in: db) }
        }
    }
}

/// Deliberate bugs for testing the harness itself (hidden flag `--broken-writer`): the checks
/// must catch them, or they prove nothing. Only writer 0 misbehaves, on every third write.
enum BrokenWriterMode: String, Sendable, CaseIterable {
    /// Rolls the write back but acknowledges it anyway: the checker must report it lost.
    case skipCommit = "skip-commit"
    /// Applies an insert twice in its transaction: the checker must report a duplicate.
    case duplicate
    /// Commits the write but reports it failed: the checker must report an unexpected write.
    case forgetAcknowledgement = "forget-ack"

    /// Whether writer `index` misbehaves on `operation`.
    func applies(toWriter index: Int, _ operation: WriteOperation) -> Bool {
        guard index == 0, operation.id.seq % 3 == 1 else { return false }
        return self != .duplicate || operation.kind == .insert
    }
}
