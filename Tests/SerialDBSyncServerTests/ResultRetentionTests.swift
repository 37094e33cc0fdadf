import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

/// A clock a test moves by hand, so that a retention window passes without waiting.
final class TestClock: Sendable {
    private let time: Locked<Date>

    init(start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        time = Locked(start)
    }

    var now: Date { time.withLock { $0 } }

    func advance(by seconds: TimeInterval) {
        time.withLock { $0 += seconds }
    }
}

/// Upload results are kept for a retention window; a seq whose result expired is a
/// "duplicate" that changes nothing, and the results a store holds stay bounded by the window.
@Suite(.timeLimit(.minutes(5))) struct ResultRetentionTests {
    private static let day: TimeInterval = 86_400
    private static let week = 7 * day

    private func results(_ answer: SyncHTTPClient.Answer) -> [JSONValue] {
        answer["results"]?.arrayValue ?? []
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aRetryAfterTheWindowIsADuplicateThatChangesNothing(_ kind: SyncStoreKind) async throws {
        let clock = TestClock()
        let running = try RunningSyncServer(kind, clock: clock)
        defer { try? running.stop() }
        let alice = running.alice
        let first = try await alice.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "one"}"#)])
        #expect(results(first).first?["status"] == .string("applied"))
        // Another device changes the row meanwhile.
        let other = try await alice.postData(
            client: "e", [upsert(1, "note", #"{"id": "a", "title": "two"}"#, base: 1)])
        #expect(results(other).first?["status"] == .string("applied"))

        clock.advance(by: Self.week - 1)
        #expect(try running.store.purgeResults(olderThan: Self.week) == 0, "still inside the window")
        let inside = try await alice.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "one"}"#)])
        #expect(results(inside) == results(first), "inside the window the first result comes back")

        clock.advance(by: 2)
        #expect(try running.store.purgeResults(olderThan: Self.week) == 2)
        let retry = try await alice.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "one"}"#)])
        #expect(retry.status == 200)
        #expect(results(retry) == [.object(["seq": .integer(1), "status": .string("duplicate")])])
        let page = try await alice.fetchData("note", since: 0)
        #expect(page["changes"]?[0]?["row"]?["title"] == .string("two"), "the duplicate changed nothing")
        #expect(page["version"] == .integer(2))
        // A new seq is applied as usual.
        let next = try await alice.postData(client: "d", [upsert(2, "note", #"{"id": "b", "title": "x"}"#)])
        #expect(results(next).first?["status"] == .string("applied"))
        // Another client's seq 1 is its own, and a client without a record is new.
        let fresh = try await alice.postData(client: "f", [upsert(1, "note", #"{"id": "c", "title": "y"}"#)])
        #expect(results(fresh).first?["status"] == .string("applied"))
        let bob = try await running.bob.postData(client: "d", [upsert(1, "note", #"{"id": "a", "title": "b"}"#)])
        #expect(results(bob).first?["status"] == .string("applied"), "marks are per account")
    }

    /// Seqs are counts, so a client may start at 0: with no seq answered yet, 0 is new.
    @Test(arguments: SyncStoreKind.allCases)
    func aFirstSeqOfZeroIsAppliedAndItsRetryGetsItsResult(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, clock: TestClock())
        defer { try? running.stop() }
        let alice = running.alice
        let first = try await alice.postData(client: "zero", [upsert(0, "note", #"{"id": "z", "title": "zero"}"#)])
        #expect(results(first).first?["status"] == .string("applied"))
        let retry = try await alice.postData(client: "zero", [upsert(0, "note", #"{"id": "z", "title": "zero"}"#)])
        #expect(results(retry) == results(first), "the retry gets the first result")
        let next = try await alice.postData(client: "zero", [upsert(1, "note", #"{"id": "y", "title": "one"}"#)])
        #expect(results(next).first?["status"] == .string("applied"))
        let (changes, _) = try await alice.fetchAll("note")
        #expect(changes.count == 2, "z once, y once")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aRetriedRequestAcrossTheWindowsEdgeGetsDuplicatesAndFirstResults(_ kind: SyncStoreKind) async throws {
        let clock = TestClock()
        let running = try RunningSyncServer(kind, clock: clock)
        defer { try? running.stop() }
        let alice = running.alice
        let old = [
            upsert(1, "note", #"{"id": "a", "title": "1"}"#), upsert(2, "note", #"{"id": "b", "title": "2"}"#),
        ]
        let new = [
            upsert(3, "note", #"{"id": "c", "title": "3"}"#), upsert(4, "note", #"{"id": "a", "title": "4"}"#),
        ]
        _ = try await alice.postData(client: "d", old)
        clock.advance(by: 3 * Self.day)
        let second = try await alice.postData(client: "d", new)
        #expect(results(second).map { $0["status"] } == [.string("applied"), .string("conflict")])
        clock.advance(by: 5 * Self.day)  // the first request is 8 days old, the second 5
        #expect(try running.store.purgeResults(olderThan: Self.week) == 2)

        let retry = try await alice.postData(
            client: "d", old + new + [upsert(5, "note", #"{"id": "d", "title": "5"}"#)])
        let answered = results(retry)
        #expect(answered.map { $0["seq"] } == (1...5).map { .integer($0) })
        #expect(
            Array(answered.prefix(2)) == [1, 2].map { .object(["seq": .integer($0), "status": .string("duplicate")]) })
        #expect(Array(answered[2..<4]) == results(second), "the unexpired results come back as they were")
        #expect(answered[4]["status"] == .string("applied"))
        #expect(answered[4]["version"] == .integer(4))
        let (changes, _) = try await alice.fetchAll("note")
        #expect(changes.count == 4, "a, b, c, d: nothing applied twice")
    }

    @Test(arguments: SyncStoreKind.allCases)
    func storedResultsStayBoundedByTheWindowAcrossPurges(_ kind: SyncStoreKind) async throws {
        let clock = TestClock()
        let directory = try TemporaryDirectory()
        let location = try kind.makeLocation(in: directory)
        let store = try location.open(clock: clock)
        defer { try? store.close() }
        var seq: Int64 = 0
        var purged: [Int] = []
        // Ten days of 50 results a day, a purge each day: never more than 8 days' results held.
        for _ in 0..<10 {
            let mutations = (0..<50).map { _ -> SyncStoreMutation in
                seq += 1
                return SyncStoreMutation(
                    seq: seq, table: "note", owner: "alice", action: .reject(message: "test \(seq)"), baseVersion: nil)
            }
            _ = try store.apply(account: "alice", clientID: "d", mutations: mutations)
            purged.append(try store.purgeResults(olderThan: Self.week))
            clock.advance(by: Self.day)
        }
        #expect(purged == [0, 0, 0, 0, 0, 0, 0, 0, 50, 50])
        // What is left answers with its first result; what is gone, as a duplicate.
        let retry = try store.apply(
            account: "alice", clientID: "d",
            mutations: [1, 100, 101, 500].map {
                SyncStoreMutation(
                    seq: $0, table: "note", owner: "alice", action: .reject(message: "again"), baseVersion: nil)
            })
        #expect(retry == [.duplicate, .duplicate, .rejected(message: "test 101"), .rejected(message: "test 500")])
    }

    @Test func purgeTombstonesDropsTheResultsOlderThanRetention() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("server.sqlite")
        let config = directory.path("sync.json")
        try Data(SyncFixtures.configurationJSON.utf8).write(to: URL(fileURLWithPath: config))
        // Results recorded two minutes ago by the system clock.
        let store = try SQLiteSyncStore(path: path, clock: { Date(timeIntervalSinceNow: -120) })
        let rejected = (1...3).map {
            SyncStoreMutation(
                seq: Int64($0), table: "note", owner: "alice", action: .reject(message: "r"), baseVersion: nil)
        }
        _ = try store.apply(account: "alice", clientID: "d", mutations: rejected)
        try store.close()

        func purge(_ extra: [String]) async throws -> (status: Int32, output: String, errors: String) {
            let process = try ServerProcess(
                arguments: ["purge-tombstones", "--config", config, "--db", path, "--through", "0"] + extra)
            let status = try await process.exitStatus()
            return (status, process.standardOutput, process.standardError)
        }
        let kept = try await purge(["--retention", "1h"])
        #expect(kept.status == 0)
        #expect(kept.output.hasSuffix("dropped 0 expired upload result(s)\n"), "\(kept.output)")
        let byDefault = try await purge([])
        #expect(byDefault.output.hasSuffix("dropped 0 expired upload result(s)\n"), "a week by default")
        let dropped = try await purge(["--retention", "90s"])
        #expect(dropped.status == 0)
        #expect(dropped.output.hasSuffix("dropped 3 expired upload result(s)\n"), "\(dropped.output)")
        for bad in ["7", "d", "-1d", "7w", "1.5h", ""] {
            let refused = try await purge(["--retention", bad])
            #expect(refused.status == 2, "--retention \(bad)")
            #expect(refused.errors.contains("--retention"), "\(refused.errors)")
        }
        let reopened = try SQLiteSyncStore(path: path)
        defer { try? reopened.close() }
        #expect(
            try reopened.apply(account: "alice", clientID: "d", mutations: rejected) == [
                .duplicate, .duplicate, .duplicate,
            ])
    }
}
