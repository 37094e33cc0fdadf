import Foundation
import SerialDBSyncServer
import SerialDBTestSupport
import Testing

/// Many writers upload while fetchers follow their cursors: a cursor never skips a row,
/// because versions follow commit order.
@Suite(.timeLimit(.minutes(5))) struct ConcurrentSyncTests {
    @Test(arguments: SyncStoreKind.allCases)
    func fetchersFollowingTheirCursorsNeverMissARowWhileManyWritersUpload(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind) { $0.threads = 8 }
        defer { try? running.stop() }
        let writers = 6
        let requestsPerWriter = 15
        let rowsPerRequest = 12
        let total = writers * requestsPerWriter * rowsPerRequest
        let everyKey = Set(
            (0..<writers).flatMap { writer in (0..<requestsPerWriter * rowsPerRequest).map { "w\(writer)-\($0)" } })
        let client = running.alice

        try await withThrowingTaskGroup(of: Set<String>?.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var seq = 0
                    for _ in 0..<requestsPerWriter {
                        let mutations = (0..<rowsPerRequest).map { _ -> String in
                            defer { seq += 1 }
                            return upsert(seq + 1, "note", #"{"id": "w\#(writer)-\#(seq)", "title": "t"}"#)
                        }
                        let answer = try await client.postData(client: "writer-\(writer)", mutations)
                        guard answer.status == 200 else { throw UnexpectedAnswer(answer: answer) }
                    }
                    return nil
                }
            }
            for fetcher in 0..<3 {
                group.addTask {
                    var seen = Set<String>()
                    var cursor: Int64 = 0
                    let deadline = ContinuousClock.now + .seconds(120)
                    while seen.count < total {
                        guard ContinuousClock.now < deadline else { throw FetcherGaveUp(seen: seen.count, of: total) }
                        let page = try await client.fetchData("note", since: cursor, limit: 5 + fetcher * 6)
                        guard page.status == 200, let changes = page["changes"]?.arrayValue,
                            let next = page["version"]?.integerValue
                        else { throw UnexpectedAnswer(answer: page) }
                        let versions = changes.compactMap { $0["version"]?.integerValue }
                        #expect(versions == versions.sorted() && versions.allSatisfy { $0 > cursor })
                        for change in changes {
                            if let id = change["row"]?["id"]?.stringValue { seen.insert(id) }
                        }
                        cursor = next
                        if changes.isEmpty { try await Task.sleep(for: .milliseconds(2)) }
                    }
                    return seen
                }
            }
            var fetchersDone = 0
            for try await seen in group {
                guard let seen else { continue }
                #expect(seen == everyKey)
                fetchersDone += 1
            }
            #expect(fetchersDone == 3)
        }
        #expect(try await client.fetchAll("note").changes.count == total)
    }

    @Test func theRequestLogNamesMethodPathAccountStatusButNoTokenOrValue() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        _ = try await running.alice.postData(
            client: "d", [upsert(1, "note", #"{"id": "secret-key", "title": "secret-title"}"#)])
        _ = try await running.client("t-wrong").fetchData("note", since: 0)
        let lines = running.log.withLock { $0.map(\.description) }
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("POST /v1/post-data account=alice status=200 "))
        #expect(lines[1].hasPrefix("POST /v1/fetch-data account=- status=401 "))
        for line in lines {
            #expect(!line.contains("t-alice") && !line.contains("t-wrong") && !line.contains("secret"))
        }
    }
}

/// A fetcher did not see every row in time: a skipped row would look like this.
struct FetcherGaveUp: Error {
    let seen: Int
    let of: Int
}
