import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every status code of the wire protocol, with its error code, over real HTTP.
@Suite(.timeLimit(.minutes(5))) struct HTTPStatusTests {
    @Test func aMissingOrUnknownTokenIs401() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        for client in [running.client(nil), running.client("t-mallory"), running.client("t-alic"), running.client("")] {
            let answer = try await client.post("/v1/check-update", #"{"tables": []}"#)
            #expect(answer.status == 401)
            #expect(answer.errorCode == "unauthorized")
        }
        let basic = try await running.alice.send(
            "/v1/check-update", body: Data(#"{"tables": []}"#.utf8), token: .some(nil))
        #expect(basic.status == 401)
    }

    @Test func thirteenWrongSpellingsOfATokenAreAll401() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        let spellings = [
            "Bearer", "Bearer ", "t-alice", "Bearer t-alic", "Bearer t-alicee", "Bearer T-ALICE", "Basic t-alice",
            "Bearer:t-alice", "Bearert-alice", "Bearer t-alice t-alice", #"Bearer "t-alice""#, "Bearer dC1hbGljZQ==",
            "Bearer t-bob t-alice",
        ]
        #expect(spellings.count == 13)
        for spelling in spellings {
            var request = URLRequest(url: running.server.url.appendingPathComponent("/v1/check-update"))
            request.httpMethod = "POST"
            request.timeoutInterval = 60
            request.httpBody = Data(#"{"tables": []}"#.utf8)
            request.setValue(spelling, forHTTPHeaderField: "Authorization")
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 401, "\(spelling)")
            #expect(try JSONValue.parse(data)["error"]?["code"] == .string("unauthorized"), "\(spelling)")
        }
        #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
    }

    @Test func writingAGlobalTableIs403() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        let answer = try await running.bob.postData(client: "d", [delete(1, "country", #"{"code": "FR"}"#, base: 0)])
        #expect(answer.status == 403)
        #expect(answer.errorCode == "forbidden")
    }

    @Test func malformedRequestsAre400() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        let cases: [(String, String)] = [
            ("/v1/check-update", "{"),
            ("/v1/check-update", ""),
            ("/v1/check-update", "[]"),
            ("/v1/check-update", "{}"),
            ("/v1/check-update", #"{"tables": [{"table": "note"}]}"#),
            ("/v1/fetch-schema", #"{"table": "nothing"}"#),
            ("/v1/fetch-schema", #"{"table": 3}"#),
            ("/v1/fetch-data", #"{"table": "note"}"#),
            ("/v1/fetch-data", #"{"table": "note", "since": -1}"#),
            ("/v1/fetch-data", #"{"table": "note", "since": 0, "limit": 0}"#),
            ("/v1/fetch-data", #"{"table": "note", "since": "0"}"#),
            ("/v1/post-data", #"{"mutations": []}"#),
            ("/v1/post-data", #"{"client_id": "", "mutations": []}"#),
            ("/v1/post-data", #"{"client_id": "d", "mutations": {}}"#),
            (
                "/v1/post-data",
                #"{"client_id": "d", "mutations": [{"table": "note", "op": "upsert", "row": {}, "base_version": 0}]}"#
            ),
            (
                "/v1/post-data",
                #"{"client_id": "d", "mutations": [{"seq": 1, "table": "note", "op": "merge", "row": {}, "base_version": 0}]}"#
            ),
            (
                "/v1/post-data",
                #"{"client_id": "d", "mutations": [{"seq": 1, "table": "note", "op": "upsert", "base_version": 0}]}"#
            ),
            (
                "/v1/post-data",
                #"{"client_id": "d", "mutations": [{"seq": 1, "table": "note", "op": "upsert", "row": {"id": "a", "title": "t"}}]}"#
            ),
            (
                "/v1/post-data",
                #"{"client_id": "d", "mutations": [{"seq": 1, "table": "note", "op": "delete", "row": {"id": "a"}, "base_version": 1}]}"#
            ),
            ("/v1/post-data", #"{"client_id": "d", "mutations": [7]}"#),
        ]
        for (path, body) in cases {
            let answer = try await running.alice.post(path, body)
            #expect(answer.status == 400, "\(path) \(body)")
            #expect(answer.errorCode == "bad_request", "\(path) \(body)")
            #expect(answer.errorMessage?.isEmpty == false)
        }
    }

    @Test func anUnknownPathIs404AndAnotherMethodIs405() async throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        let unknown = try await running.alice.post("/v1/push", "{}")
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "not_found")
        let root = try await running.alice.post("/", "{}")
        #expect(root.status == 404)
        for method in ["GET", "PUT", "DELETE"] {
            let answer = try await running.alice.send("/v1/fetch-data", body: Data(), method: method)
            #expect(answer.status == 405, "\(method)")
            #expect(answer.errorCode == "method_not_allowed")
        }
    }

    #if canImport(Glibc)
        /// The 413 is answered from the headers, before the body: a client still sending the body
        /// then meets a closed connection (`Send failure: Broken pipe` from URLSession, or the
        /// answer, whichever its timing gives), so the request is made on a raw socket whose
        /// headers announce one byte over the limit and send no body at all.
        @Test func aBodyOverTheLimitIs413AndTheServerCarriesOn() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            let connection = try RawConnection(port: running.server.port)
            connection.send(
                "POST /v1/post-data HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Content-Length: \(4 * 1024 * 1024 + 1)\r\n\r\n")
            let answer = try #require(connection.answer(), "no answer before the body")
            #expect(answer.hasPrefix("HTTP/1.1 413"), "\(answer.prefix(60))")
            #expect(answer.contains("\"payload_too_large\""))
            let justUnder = Data(
                (#"{"tables": []}"# + String(repeating: " ", count: 4 * 1024 * 1024 - 14)).utf8)
            #expect(try await running.alice.send("/v1/check-update", body: justUnder).status == 200)
        }
    #endif

    @Test func aChunkedBodyOverTheLimitIs413Too() async throws {
        let running = try RunningSyncServer(.sqliteMemory) { $0.maximumBodySize = 1_000 }
        defer { try? running.stop() }
        // No Content-Length: the server counts the chunks as they come and drops the excess.
        var request = URLRequest(url: running.server.url.appendingPathComponent("/v1/check-update"))
        request.httpMethod = "POST"
        request.timeoutInterval = 60
        request.setValue("Bearer t-alice", forHTTPHeaderField: "Authorization")
        request.httpBodyStream = InputStream(
            data: Data((#"{"tables": []}"# + String(repeating: " ", count: 2_000)).utf8))
        let (data, response) = try await URLSession.shared.data(for: request)
        #expect((response as? HTTPURLResponse)?.statusCode == 413)
        #expect(try JSONValue.parse(data)["error"]?["code"] == .string("payload_too_large"))
        let small = try await running.alice.post("/v1/check-update", #"{"tables": []}"#)
        #expect(small.status == 200)
    }

    @Test func aStoreFailureIs500WithoutItsInternals() async throws {
        let store = FailingStore()
        var options = SyncServerOptions()
        options.port = 0
        let log = Locked<[SyncRequestLog]>([])
        options.log = { entry in log.withLock { $0.append(entry) } }
        let server = try SyncServer(configuration: try SyncFixtures.configuration(), store: store, options: options)
        defer { server.stop() }
        let answer = try await SyncHTTPClient(baseURL: server.url, token: "t-alice").fetchData("note", since: 0)
        #expect(answer.status == 500)
        #expect(answer.errorCode == "internal")
        #expect(answer.errorMessage?.contains("disk on fire") == false)
        #expect(log.withLock { $0.last?.internalError?.contains("disk on fire") } == true, "the log keeps the cause")
    }
}

/// A store whose every call fails, as a broken disk would make it.
struct FailingStore: SyncStore {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk on fire" }
    }

    func latestVersions(of tables: [(table: String, owner: String)]) throws -> [Int64] { throw Failure() }
    func changes(table: String, owner: String, since: Int64, limit: Int, maximumBytes: Int) throws -> SyncChangePage {
        throw Failure()
    }
    func apply(account: String, clientID: String?, mutations: [SyncStoreMutation]) throws -> [SyncUploadOutcome] {
        throw Failure()
    }
    func purgeTombstones(through version: Int64) throws -> (purged: Int, floor: Int64) { throw Failure() }
    func purgeFloor() throws -> Int64 { throw Failure() }
    func currentVersion() throws -> Int64 { throw Failure() }
    func summary() throws -> SyncStoreSummary { throw Failure() }
    func purgeResults(olderThan retention: TimeInterval) throws -> Int { throw Failure() }
    /// Starting succeeds (the disk caught fire afterwards): the calls of requests fail.
    func adoptDefinition(
        table: String, schema: String, renamedFrom: String?, carryOver: ([SyncStoredRow]) throws -> [SyncStoredRow]
    ) throws {}
    func close() throws {}
}
