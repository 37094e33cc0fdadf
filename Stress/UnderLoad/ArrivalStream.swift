import Dispatch
import Foundation
import SerialDB

/// Open-loop load: a new task submits one insert at a fixed rate, without waiting for the
/// writes before it, as requests arriving at a server would. The writer threads and tasks are
/// closed loops (each waits for its write), so an upgrade holds at most one write of each;
/// this stream keeps arriving while the upgrade runs, which is what gives the wait times of
/// held writes a distribution (from the upgrade's whole length down to nearly nothing).
///
/// Inserts only, under their own author: many of them are in flight at once, so no order
/// between them is assumed.
final class ArrivalStream: Sendable {
    let author: Int
    private let interval: Double
    private let sink: any AcknowledgementSink
    private let group = DispatchGroup()
    private let finished = DispatchSemaphore(value: 0)

    init(author: Int, perSecond: Int, sink: any AcknowledgementSink) {
        self.author = author
        interval = 1 / Double(max(perSecond, 1))
        self.sink = sink
    }

    /// Starts submitting on a thread of its own; stops when the control says stop.
    func start(target: LoadTarget, control: LoadControl, clock: RunClock) {
        Thread { [self] in
            var seq = 0
            var next = clock.now
            while !control.isStopped {
                seq += 1
                submit(seq, target: target, control: control, clock: clock)
                next += interval
                Thread.sleep(forTimeInterval: max(0, next - clock.now))
            }
            finished.signal()
        }.start()
    }

    /// Waits until the stream stopped and every write it submitted returned.
    func join() {
        finished.wait()
        group.wait()
    }

    private func submit(_ seq: Int, target: LoadTarget, control: LoadControl, clock: RunClock) {
        let operation = WriteOperation(
            id: OperationID(author: author, seq: seq), kind: .insert, target: RowKey(author: author, seq: seq))
        let newSchema = control.hasUpgradeStarted
        let submitted = clock.now
        group.enter()
        Task.detached { [self] in
            do {
                let steps = try await target.write { db in
                    try ItemTable.perform(operation, newSchema: newSchema, in: db)
                }
                sink.acknowledged(
                    Acknowledgement(
                        operation: operation, seenSteps: steps, afterUpgradeStart: newSchema, submitted: submitted,
                        returned: clock.now))
            } catch {
                sink.failed(WriteFailure(operation: operation.id, error: error))
            }
            group.leave()
        }
    }
}
