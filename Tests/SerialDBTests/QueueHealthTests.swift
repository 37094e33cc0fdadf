import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct QueueHealthTests {
    private func configuration(threshold: Duration?, reports: Locked<[SlowBlockReport]>) -> Configuration {
        var configuration = Configuration()
        configuration.label = "health"
        configuration.slowBlockThreshold = threshold
        configuration.onSlowBlock = { report in reports.withLock { $0.append(report) } }
        return configuration
    }

    @Test func aSlowBlockIsReportedWithTheCallersFileLineAndFunction() throws {
        let reports = Locked<[SlowBlockReport]>([])
        let queue = try DatabaseQueue(configuration: configuration(threshold: .milliseconds(50), reports: reports))
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let slowLine = #line + 1
        try queue.write { _ in Thread.sleep(forTimeInterval: 0.12) }
        let all = reports.withLock { $0 }
        #expect(all.count == 1, "only the slow block: \(all)")
        let report = try #require(all.first)
        #expect(report.file == "SerialDBTests/QueueHealthTests.swift")
        #expect(report.line == slowLine)
        #expect(report.function.hasPrefix("aSlowBlockIsReportedWithTheCallersFileLineAndFunction"))
        #expect(report.label == "health")
        #expect(report.ran >= .milliseconds(120), "the block slept 120 ms")
        #expect(report.description.contains("QueueHealthTests.swift:\(slowLine)"))
    }

    @Test func timeSpentBehindAnotherBlockCountsAsWaited() throws {
        let reports = Locked<[SlowBlockReport]>([])
        let queue = try DatabaseQueue(configuration: configuration(threshold: .milliseconds(50), reports: reports))
        let holding = DispatchSemaphore(value: 0)
        let reading = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            try? queue.inDatabase { _ in
                holding.signal()
                // The 150 ms start once the reader is about to call, so the read waits nearly all
                // of them however late this thread is scheduled (a sleep started at `holding`
                // could be over by the time a loaded machine ran the read); only a reader held up
                // 100 ms between its signal and its call could still wait under the threshold.
                _ = reading.wait(seconds: deadlockBound)
                Thread.sleep(forTimeInterval: 0.15)
            }
            done.signal()
        }
        #expect(holding.wait(seconds: deadlockBound))
        reading.signal()
        let readLine = #line + 1
        try queue.read { _ in }  // waits for the sleeping block, then runs at once
        #expect(done.wait(seconds: deadlockBound))
        let all = reports.withLock { $0 }
        #expect(all.count == 2, "the sleeping block ran long, the read waited long: \(all)")
        let read = all.first { $0.line == readLine }
        #expect(read.map { $0.waited >= .milliseconds(50) } == true, "\(all)")
    }

    @Test func asyncCallsAndPoolReadsAreMeasuredToo() async throws {
        let reports = Locked<[SlowBlockReport]>([])
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(configuration: configuration(threshold: .milliseconds(30), reports: reports))
        try await queue.inDatabase { _ in Thread.sleep(forTimeInterval: 0.06) }
        let pool = try DatabasePool(
            path: directory.path("pool.sqlite"),
            configuration: configuration(threshold: .milliseconds(30), reports: reports))
        // A synchronous function, so that the blocking overload is the one called.
        func blockingRead() throws { try pool.read { _ in Thread.sleep(forTimeInterval: 0.06) } }
        try blockingRead()
        _ = try await pool.read { _ in Thread.sleep(forTimeInterval: 0.06) }
        try await pool.write { _ in Thread.sleep(forTimeInterval: 0.06) }
        #expect(reports.withLock { $0.count } == 4)
        #expect(reports.withLock { $0 }.allSatisfy { $0.file == "SerialDBTests/QueueHealthTests.swift" })
    }

    @Test func statisticsCountEveryBlockThatRanAndOnlyThose() throws {
        var configuration = Configuration()
        configuration.recordsStatistics = true
        let queue = try DatabaseQueue(configuration: configuration)
        for _ in 0..<50 {
            try queue.write { db in _ = try db.fetchOne(Int.self, sql: "SELECT 1") }
        }
        // A refused call never ran: it is not counted.
        _ = try? queue.inDatabase { _ in try queue.read { _ in } }
        let statistics = try #require(queue.statistics())
        #expect(statistics.blocksRun == 51, "50 writes and the outer inDatabase")
        for percentiles in [statistics.waited, statistics.ran] {
            #expect(percentiles.p50 <= percentiles.p90)
            #expect(percentiles.p90 <= percentiles.p99)
            #expect(percentiles.p99 <= percentiles.max)
            #expect(percentiles.max > .zero)
        }
    }

    @Test func withNothingConfiguredNoStatisticsAreKept() throws {
        let queue = try DatabaseQueue()
        try queue.write { _ in }
        #expect(queue.statistics() == nil)
    }
}
