import Dispatch
import Foundation
import SerialDB

/// The writers of one generation: writer threads first (indexes 0..<threads), then async tasks.
/// All of them share one queue; each owns a partition of the seed rows.
final class WriterPool: Sendable {
    let threadWriters: [Writer]
    let taskWriters: [Writer]
    private let group = DispatchGroup()

    init(
        generation: Int, threads: Int, tasks: Int, seedRows: Int, seed: UInt64, sink: any AcknowledgementSink,
        budget: Writer.Budget, broken: BrokenWriterMode?
    ) {
        let count = threads + tasks
        let writers = (0..<count).map { index in
            Writer(
                index: index,
                generator: OperationGenerator(
                    author: WriteOperation.author(generation: generation, index: index), index: index,
                    writerCount: count, seedRows: seedRows, seed: seed),
                sink: sink, budget: budget, broken: broken)
        }
        threadWriters = Array(writers.prefix(threads))
        taskWriters = Array(writers.dropFirst(threads))
    }

    /// Every writer's key, for the `author` table.
    var authors: [Int] { (threadWriters + taskWriters).map(\.author) }

    /// Starts every writer; returns at once.
    func start(target: LoadTarget, control: LoadControl, clock: RunClock) {
        for writer in threadWriters {
            group.enter()
            Thread { [group] in
                writer.runOnThread(target: target, control: control, clock: clock)
                group.leave()
            }.start()
        }
        for writer in taskWriters {
            group.enter()
            Task.detached { [group] in
                await writer.runAsTask(target: target, control: control, clock: clock)
                group.leave()
            }
        }
    }

    /// Waits until every writer returned.
    func join() {
        group.wait()
    }
}
