import Foundation
import HarnessSupport
import Synchronization

/// The live status line: redrawn five times a second while a scenario runs, and only when
/// standard output is a terminal (a log file gets the summary alone).
final class ProgressLine: Sendable {
    private let label: String
    private let clock = RunClock()
    private let status = Locked("")
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let render: @Sendable () -> String

    /// - Parameter render: extra live figures, appended to the status (called on the drawing
    ///   thread).
    init(label: String, render: @escaping @Sendable () -> String = { "" }) {
        self.label = label
        self.render = render
    }

    /// Starts drawing (no-op when standard output is not a terminal).
    func start() {
        guard Console.isTerminal else { return }
        running.store(true, ordering: .sequentiallyConsistent)
        Thread { [self] in
            while running.load(ordering: .sequentiallyConsistent) {
                draw()
                Thread.sleep(forTimeInterval: 0.2)
            }
            Console.status("")
            stopped.signal()
        }.start()
    }

    /// Sets what the scenario is doing now.
    func update(_ text: String) {
        status.withLock { $0 = text }
    }

    /// Stops drawing and clears the line.
    func stop() {
        guard running.exchange(false, ordering: .sequentiallyConsistent) else { return }
        stopped.wait()
    }

    private func draw() {
        let text = status.withLock { $0 }
        let extra = render()
        let elapsed = String(format: "%5.1fs", clock.now)
        Console.status("\(label) \(elapsed)  \(text)" + (extra.isEmpty ? "" : "  " + extra))
    }
}
