import Dispatch
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The upgrade holds all other work: what is submitted after `startMigration` returns runs
/// after the upgrade, against the new schema, or fails clearly if the upgrade failed.
@Suite struct MigrationGateTests {
    @Test(arguments: DatabaseKind.allCases)
    func writesSubmittedDuringASlowUpgradeRunAfterItAndSeeTheNewSchema(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(UserLadder.migrator(steps: 1))
        try queue.write { db in try UserLadder.insertUsers(db, count: 100) }

        let upgrade = queue.startMigration(UserLadder.migrator(delayPerStep: 0.15))
        let outcomes = Locked<[String]>([])
        let writers = finishes {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for index in 0..<25 {
                    let id = 1000 + thread * 100 + index
                    do {
                        // `pin` exists only after step 3: this insert cannot succeed before the upgrade.
                        let appliedSteps = try queue.write { db -> Int in
                            try db.execute(
                                sql: "INSERT INTO T_User(id, name, email, pin) VALUES (?, ?, ?, ?)",
                                arguments: [id, "writer-\(thread)", "w\(id)@example.org", "p\(id)"])
                            return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") ?? 0
                        }
                        outcomes.withLock { $0.append(appliedSteps == 3 ? "after" : "before: \(appliedSteps)") }
                    } catch {
                        outcomes.withLock { $0.append("error: \(error)") }
                    }
                }
            }
        }
        try #require(writers, "the writers never finished: the gate most likely deadlocked")
        try outcome { try upgrade.wait() }.get()
        #expect(outcomes.withLock { $0 } == Array(repeating: "after", count: 200))
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE id >= 1000") == 200)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(DISTINCT pin) FROM T_User WHERE id >= 1000") == 200)
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE id < 1000 AND pin = '111111'") == 100)
        }
    }

    @Test func asyncWorkSubmittedDuringTheUpgradeWaitsForIt() async throws {
        let queue = try DatabaseQueue()
        try await queue.migrate(UserLadder.migrator(steps: 1))
        let upgrade = queue.startMigration(UserLadder.migrator(delayPerStep: 0.1))
        let steps = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<50 {
                group.addTask {
                    try await queue.write { db in
                        try db.execute(
                            sql: "INSERT INTO T_User(id, name, pin) VALUES (?, 'task', '0')", arguments: [task])
                        return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") ?? 0
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        try await result(of: Task { try await upgrade.wait() }).get()
        #expect(steps == Array(repeating: 3, count: 50))
    }

    @Test func workSubmittedBeforeTheUpgradeKeepsItsPlaceInLine() throws {
        let queue = try DatabaseQueue()
        try queue.migrate(UserLadder.migrator(steps: 1))
        let release = DispatchSemaphore(value: 0)
        let running = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let seenSteps = Locked<Int?>(nil)
        Thread.detachNewThread {
            let steps = try? queue.inDatabase { db in
                running.signal()
                _ = release.wait(seconds: deadlockBound)
                return try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations")
            }
            seenSteps.withLock { $0 = steps ?? -1 }
            finished.signal()
        }
        try #require(running.wait(seconds: deadlockBound))
        let upgrade = queue.startMigration(UserLadder.migrator())
        release.signal()
        try outcome { try upgrade.wait() }.get()
        // The block returned before the upgrade ran; its thread may record the result later.
        try #require(finished.wait(seconds: deadlockBound))
        #expect(seenSteps.withLock { $0 } == 1)
        #expect(
            try queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") } == 3)
    }

    @Test(arguments: DatabaseKind.allCases)
    func whenTheUpgradeFailsEveryWaitingWriteThrowsAndNothingRuns(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.migrate(UserLadder.migrator(steps: 2))
        try queue.write { db in try UserLadder.insertUsers(db, count: 10) }
        struct DiskOnFire: Error {}
        var failing = UserLadder.migrator(steps: 2)
        failing.registerMigration("3-fails-slowly") { db in
            sleepSeconds(0.3)
            try db.execute(sql: "ALTER TABLE T_User ADD COLUMN pin TEXT NOT NULL DEFAULT '111111'")
            throw DiskOnFire()
        }
        let upgrade = queue.startMigration(failing)
        let errors = Locked<[SerialDBError]>([])
        let unexpected = Locked<[String]>([])
        let writers = finishes {
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for index in 0..<10 {
                    do {
                        try queue.write { db in
                            try db.execute(
                                sql: "INSERT INTO T_User(id, name) VALUES (?, 'late')",
                                arguments: [500 + thread * 10 + index])
                        }
                        unexpected.withLock { $0.append("write \(thread)/\(index) ran") }
                    } catch let error as SerialDBError {
                        errors.withLock { $0.append(error) }
                    } catch {
                        unexpected.withLock { $0.append("\(error)") }
                    }
                }
            }
        }
        try #require(writers, "the writers never finished: the gate most likely deadlocked")
        let upgradeError = #expect(throws: SerialDBError.self) { try outcome { try upgrade.wait() }.get() }
        #expect(upgradeError?.code == .migrationFailed)
        #expect(unexpected.withLock { $0 }.isEmpty)
        let refusals = errors.withLock { $0 }
        #expect(refusals.count == 80)
        #expect(refusals.allSatisfy { $0.code == .migrationFailed && $0.underlying is DiskOnFire })
        #expect(refusals.first?.message.contains("3-fails-slowly") == true)

        // The queue stays failed until a migration succeeds.
        #expect(throws: SerialDBError.self) { try queue.read { _ in } }
        try queue.migrate(UserLadder.migrator())
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User") == 10)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM serialdb_migrations") == 3)
        }
    }

    @Test func twoProcessesMigratingOneFileApplyEachStepOnce() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.sqlite")
        do {
            let queue = try DatabaseQueue(path: path)
            try queue.migrate(UserLadder.migrator(steps: 1))
            try queue.write { db in try UserLadder.insertUsers(db, count: 500) }
            try queue.close()
        }
        let children = try (0..<2).map { _ in
            try ChildProcess(executable: "serialdb-test-child", arguments: ["migrate", path, "0.2"])
        }
        for child in children { #expect(child.waitForLine("ready")) }
        for child in children { child.send("go") }
        let statuses = try children.map { try $0.waitForExit() }
        #expect(statuses == [0, 0], "children printed: \(children.map(\.printed))")
        let queue = try DatabaseQueue(path: path)
        try queue.read { db throws in
            let recorded = try db.fetchAll(
                String.self, sql: "SELECT identifier FROM serialdb_migrations ORDER BY rowid")
            #expect(recorded == UserLadder.identifiers)
            #expect(
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM T_User WHERE pin = '111111' AND email IS NULL")
                    == 500)
            #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
        }
    }
}
