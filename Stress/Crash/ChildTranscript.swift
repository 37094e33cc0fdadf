import Dispatch
import Foundation
import HarnessSupport
import SerialDB

/// What one crash child printed, parsed line by line as it arrives (on the reader thread).
final class ChildTranscript: Sendable {
    struct Content: Sendable {
        var acknowledgements: [Acknowledgement] = []
        var failures: [WriteFailure] = []
        var phases: [String] = []
        var startedSteps: [String] = []
        var committedSteps: [String] = []
        /// The child's own measure of its upgrade, from `startMigration` to done.
        var migrationSeconds: Double?
        /// `--online`: the child's own measure of its copy.
        var copySeconds: Double?
        /// When each `phase` line arrived, on the parent's clock.
        var arrivals: [String: Double] = [:]
        var hasEnded = false
        /// The highest sequence number each writer reported, acknowledged or failed.
        var lastReportedSeq: [Int: Int] = [:]
        /// Lines that were not understood, and `phase error ...` lines.
        var oddLines: [String] = []
    }

    private let clock: RunClock
    private let content = Locked(Content())
    private let ended = DispatchSemaphore(value: 0)

    init(clock: RunClock) {
        self.clock = clock
    }

    var snapshot: Content { content.withLock { $0 } }

    func consume(_ line: Substring) {
        let now = clock.now
        content.withLock { content in
            if let acknowledgement = Acknowledgement(line: line) {
                let id = acknowledgement.operation.id
                content.acknowledgements.append(acknowledgement)
                content.lastReportedSeq[id.author] = max(content.lastReportedSeq[id.author] ?? 0, id.seq)
            } else if let failure = WriteFailure(line: line) {
                content.failures.append(failure)
                let id = failure.operation
                content.lastReportedSeq[id.author] = max(content.lastReportedSeq[id.author] ?? 0, id.seq)
            } else if line.hasPrefix("phase ") {
                let words = line.split(separator: " ")
                let phase = words.count > 1 ? String(words[1]) : ""
                content.phases.append(phase)
                content.arrivals[phase] = content.arrivals[phase] ?? now
                if phase == "migrated", words.count > 2, let milliseconds = Double(words[2]) {
                    content.migrationSeconds = milliseconds / 1000
                } else if phase == "copied", words.count > 2, let milliseconds = Double(words[2]) {
                    content.copySeconds = milliseconds / 1000
                } else if !["open", "load", "copying", "migrating", "done"].contains(phase) {
                    content.oddLines.append(String(line))
                }
            } else if line.hasPrefix("step started ") {
                content.startedSteps.append(String(line.dropFirst("step started ".count)))
            } else if line.hasPrefix("step committed ") {
                content.committedSteps.append(String(line.dropFirst("step committed ".count)))
            } else if !line.isEmpty {
                content.oddLines.append(String(line))
            }
        }
    }

    /// The child's output ended (it exited or was killed).
    func finish() {
        content.withLock { $0.hasEnded = true }
        ended.signal()
    }

    /// Waits until the `phase` line arrived and returns when it did, on the parent's clock;
    /// `nil` if the output ended or `timeout` passed first.
    func waitForPhase(_ phase: String, timeout: Double) -> Double? {
        let deadline = clock.now + timeout
        while clock.now < deadline {
            let (arrival, hasEnded) = content.withLock { ($0.arrivals[phase], $0.hasEnded) }
            if let arrival { return arrival }
            if hasEnded { return nil }
            Thread.sleep(forTimeInterval: 0.000_5)
        }
        return nil
    }

    /// Waits until the reader saw the end of the output.
    func waitUntilEnded(timeout: Double) -> Bool {
        ended.wait(timeout: .now() + timeout) == .success
    }
}
