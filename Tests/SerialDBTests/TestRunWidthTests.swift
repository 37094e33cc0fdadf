import Foundation
import SerialDBTestSupport
import Testing

/// The test run's cap on test cases running at once (`Tests/CTestRunWidth`): without it, an
/// async test's steps queue behind every test not yet started, and its bounded waits measure
/// that backlog instead of the code under test.
@Suite struct TestRunWidthTests {
    private static let running = Locked(0)
    private static let widest = Locked(0)

    @Test func theRunIsCappedBeforeItStarts() {
        #expect(testRunWidth >= 1, "CTestRunWidth's constructor did not run: the test run is uncapped")
    }

    /// Three times the cap of cases, each holding its slot while it sleeps: uncapped, they all
    /// run at once; capped, never more than the cap (fewer when other tests hold slots).
    /// (At most 3 × 32 cases: a cap set in the environment may be far wider than the machine.)
    @Test(arguments: 0..<(3 * min(max(testRunWidth, 1), 32)))
    func noMoreCasesRunAtOnceThanTheCap(_ index: Int) async throws {
        let now = Self.running.withLock { running in
            running += 1
            return running
        }
        Self.widest.withLock { $0 = max($0, now) }
        try await Task.sleep(for: .milliseconds(100))
        Self.running.withLock { $0 -= 1 }
        let widest = Self.widest.withLock { $0 }
        #expect(widest <= max(testRunWidth, 1), "\(widest) cases of this test ran at once")
    }
}
