import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// The admin listener over real HTTP: `/metrics` read back by Python's Prometheus parser after
/// known traffic, `/healthz` on a store that answers and on one that is held busy, and the
/// separation of the two listeners.
@Suite(.timeLimit(.minutes(5))) struct AdminListenerTests {
    private static func server(_ kind: SyncStoreKind) throws -> RunningSyncServer {
        try RunningSyncServer(kind) { $0.adminPort = 0 }
    }

    private static func admin(_ server: RunningSyncServer) throws -> URL {
        try #require(server.server.adminURL)
    }

    /// Known traffic, every call and most statuses; then every counter of the exposition is
    /// exactly what that traffic makes it.
    @Test(arguments: SyncStoreKind.allCases)
    func metricsCountEveryRequestRowConflictAndRejectionExactly(_ kind: SyncStoreKind) async throws {
        let running = try Self.server(kind)
        defer { try? running.stop() }
        let alice = running.alice
        // 3 applied, 1 rejected (title is NOT NULL), 1 conflict (a's base is 1 by then).
        let upload = try await alice.postData(
            client: "phone",
            [
                upsert(1, "note", #"{"id": "a", "title": "one"}"#), upsert(2, "note", #"{"id": "b", "title": "two"}"#),
                upsert(3, "note", #"{"id": "c", "title": "three"}"#), upsert(4, "note", #"{"id": "d"}"#),
                upsert(5, "note", #"{"id": "a", "title": "again"}"#),
            ])
        #expect(upload.status == 200)
        #expect(
            upload["results"]?.arrayValue?.compactMap { $0["status"]?.stringValue }
                == ["applied", "applied", "applied", "rejected", "conflict"])
        // 2 + 1 changes served over two pages.
        let first = try await alice.fetchData("note", since: 0, limit: 2)
        #expect(first["changes"]?.arrayValue?.count == 2 && first["has_more"] == .bool(true))
        let second = try await alice.fetchData("note", since: first["version"]?.integerValue ?? 0, limit: 2)
        #expect(second["changes"]?.arrayValue?.count == 1)
        #expect(try await alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
        #expect(try await alice.post("/v1/fetch-schema", #"{"table": "note"}"#).status == 200)
        #expect(try await alice.post("/v1/fetch-data", #"{"table": "nowhere", "since": 0}"#).status == 400)
        #expect(try await running.client(nil).postData(client: "x", []).status == 401)
        #expect(
            try await running.bob.postData(client: "x", [upsert(1, "country", #"{"code": "fr", "name": "F"}"#)])
                .status == 403)
        #expect(try await alice.send("/v1/check-update", body: Data(), method: "GET").status == 405)
        #expect(try await alice.post("/v2/nowhere", "{}").status == 404)
        // The public listener has none of the admin paths.
        for path in ["/metrics", "/healthz", "/"] {
            #expect(try await PlainAnswer.get(path, from: running.server.url).status == 404, "\(path)")
        }

        let answer = try await PlainAnswer.get("/metrics", from: try Self.admin(running))
        #expect(answer.status == 200)
        #expect(answer.contentType == "text/plain; version=0.0.4", "\(answer.contentType ?? "none")")
        let metrics = try await ParsedMetrics.parse(answer.body)

        let requests = Dictionary(
            uniqueKeysWithValues: metrics.samples("serialdb_sync_requests_total").map {
                ("\($0.labels["call"] ?? "?") \($0.labels["status"] ?? "?")", $0.value)
            })
        #expect(
            requests == [
                "check-update 200": 1, "check-update 405": 1, "fetch-schema 200": 1, "fetch-data 200": 2,
                "fetch-data 400": 1, "post-data 200": 1, "post-data 401": 1, "post-data 403": 1, "other 404": 4,
            ])
        #expect(metrics.value("serialdb_sync_rows_uploaded_total") == 3)
        #expect(metrics.value("serialdb_sync_rows_served_total") == 3)
        #expect(metrics.value("serialdb_sync_conflicts_total") == 1)
        #expect(metrics.value("serialdb_sync_rejections_total") == 1)
        #expect(metrics.value("serialdb_sync_store_errors_total") == 0)
        #expect(metrics.value("serialdb_sync_current_version") == 3)
        #expect(metrics.value("serialdb_sync_open_connections").map { $0 >= 0 } == true)
        for name in ["requests", "rows_uploaded", "rows_served", "conflicts", "rejections", "store_errors"] {
            #expect(metrics.types["serialdb_sync_\(name)"] == "counter", "\(name)")
        }
        #expect(metrics.types["serialdb_sync_request_duration_seconds"] == "histogram")
        #expect(metrics.types["serialdb_sync_open_connections"] == "gauge")
        #expect(metrics.types["serialdb_sync_current_version"] == "gauge")

        // Each call's histogram counts its requests, in buckets that only grow up to +Inf.
        let perCall: [String: Double] = [
            "check-update": 2, "fetch-schema": 1, "fetch-data": 3, "post-data": 3, "other": 4,
        ]
        for (call, expected) in perCall {
            let buckets = metrics.samples("serialdb_sync_request_duration_seconds_bucket").filter {
                $0.labels["call"] == call
            }
            #expect(buckets.count == SyncMetrics.durationBounds.count + 1, "\(call)")
            #expect(zip(buckets, buckets.dropFirst()).allSatisfy { $0.value <= $1.value }, "\(call)")
            #expect(buckets.last?.labels["le"] == "+Inf" && buckets.last?.value == expected, "\(call)")
            #expect(metrics.value("serialdb_sync_request_duration_seconds_count", ["call": call]) == expected)
            #expect(metrics.value("serialdb_sync_request_duration_seconds_sum", ["call": call]).map { $0 > 0 } == true)
        }
        // In process, the same counts.
        let snapshot = running.server.metrics.snapshot()
        #expect(snapshot.requests(.postData, status: 200) == 1 && snapshot.rowsUploaded == 3)
    }

    /// A retried upload is answered from memory: its results count again (they are answers),
    /// and the version does not move.
    @Test(arguments: SyncStoreKind.persistent)
    func aRetriedUploadCountsItsAnswersAgainWithoutANewVersion(_ kind: SyncStoreKind) async throws {
        let running = try Self.server(kind)
        defer { try? running.stop() }
        let mutations = [upsert(1, "note", #"{"id": "a", "title": "one"}"#)]
        #expect(try await running.alice.postData(client: "phone", mutations).status == 200)
        #expect(try await running.alice.postData(client: "phone", mutations).status == 200)
        let metrics = try await ParsedMetrics.parse(
            try await PlainAnswer.get("/metrics", from: try Self.admin(running)).body)
        #expect(metrics.value("serialdb_sync_requests_total", ["call": "post-data", "status": "200"]) == 2)
        #expect(metrics.value("serialdb_sync_rows_uploaded_total") == 2)
        #expect(metrics.value("serialdb_sync_current_version") == 1)
    }

    #if canImport(Glibc)
        /// The gauge follows connections to the public listener one by one; the admin
        /// listener's own connections are not counted.
        @Test func openConnectionsFollowsThePublicListenersConnections() async throws {
            let running = try Self.server(.sqliteMemory)
            defer { try? running.stop() }
            let admin = try Self.admin(running)
            func open() async throws -> Double? {
                try await ParsedMetrics.parse(try await PlainAnswer.get("/metrics", from: admin).body)
                    .value("serialdb_sync_open_connections")
            }
            #expect(try await open() == 0)
            var connections = try (0..<3).map { _ in try RawConnection(port: running.server.port) }
            try await waitUntil(timeout: .seconds(30)) { running.server.metrics.snapshot().openConnections == 3 }
            #expect(try await open() == 3)
            connections.removeAll()
            try await waitUntil(timeout: .seconds(30)) { running.server.metrics.snapshot().openConnections == 0 }
            #expect(try await open() == 0)
            _ = connections
        }
    #endif

    @Test(arguments: SyncStoreKind.allCases)
    func healthzIsOKWhenTheStoreAnswers(_ kind: SyncStoreKind) async throws {
        let running = try Self.server(kind)
        defer { try? running.stop() }
        let answer = try await PlainAnswer.get("/healthz", from: try Self.admin(running))
        #expect(answer.status == 200)
        #expect(answer.body.hasPrefix("ok"))
        #expect(try await PlainAnswer.get("/healthz", from: try Self.admin(running), method: "POST").status == 405)
        #expect(try await PlainAnswer.get("/v1/post-data", from: try Self.admin(running)).status == 404)
    }

    /// The SQLite store's one connection held by a long write: the health check gives up after
    /// a second and says so, and is OK again once the write is done.
    @Test func healthzIs503WhileTheSQLiteStoreIsHeldBusy() async throws {
        let running = try Self.server(.sqliteFile)
        defer { try? running.stop() }
        let database = try #require(running.store as? SQLiteSyncStore).database
        let gate = Gate()
        Thread.detachNewThread {
            try? database.write { _ in
                gate.enter()
                gate.waitUntilOpen()
            }
        }
        try await waitUntil(timeout: .seconds(30)) { gate.entered }
        let busy = try await PlainAnswer.get("/healthz", from: try Self.admin(running))
        #expect(busy.status == 503)
        #expect(busy.body.contains("did not answer within 1 second"), "\(busy.body)")
        gate.open()
        try await expectHealthy(running)
    }

    /// The PostgreSQL store's state table locked by another session: the same.
    @Test func healthzIs503WhileThePostgresStoresStateIsLocked() async throws {
        let running = try Self.server(.postgres)
        defer { try? running.stop() }
        let locker = try PostgresConnection(url: running.location.address)
        try locker.execute("BEGIN; LOCK TABLE serialdb_sync_state IN ACCESS EXCLUSIVE MODE")
        let busy = try await PlainAnswer.get("/healthz", from: try Self.admin(running))
        #expect(busy.status == 503)
        #expect(busy.body.contains("did not answer within 1 second"), "\(busy.body)")
        try locker.execute("ROLLBACK")
        try await expectHealthy(running)
    }

    /// A store whose calls fail: 503 naming the failure, counted as store errors, and shown
    /// among the last errors.
    @Test func aFailingStoreIsUnhealthyCountedAndListed() async throws {
        var options = SyncServerOptions()
        options.port = 0
        options.adminPort = 0
        let server = try SyncServer(
            configuration: try SyncFixtures.configuration(), store: FailingStore(), options: options)
        defer { server.stop() }
        let admin = try #require(server.adminURL)
        #expect(
            try await SyncHTTPClient(baseURL: server.url, token: "t-alice").fetchData("note", since: 0).status == 500)
        let health = try await PlainAnswer.get("/healthz", from: admin)
        #expect(health.status == 503)
        #expect(health.body.contains("disk on fire"))
        let metrics = try await ParsedMetrics.parse(try await PlainAnswer.get("/metrics", from: admin).body)
        #expect(metrics.value("serialdb_sync_store_errors_total") == 1)
        #expect(metrics.value("serialdb_sync_requests_total", ["call": "fetch-data", "status": "500"]) == 1)
        #expect(metrics.value("serialdb_sync_current_version") == nil, "the store gave none")
        let page = try await PlainAnswer.get("/", from: admin)
        #expect(page.status == 200)
        #expect(page.body.contains("disk on fire"))
    }

    @Test func withoutAnAdminPortThereIsNoAdminListener() throws {
        let running = try RunningSyncServer(.sqliteMemory)
        defer { try? running.stop() }
        #expect(running.server.adminURL == nil)
    }

    @Test func anAdminPortThatIsTakenFailsTheStart() throws {
        let first = try Self.server(.sqliteMemory)
        defer { try? first.stop() }
        let taken = try #require(first.server.adminURL?.port)
        let error = #expect(throws: SyncServerError.self) {
            try RunningSyncServer(.sqliteMemory) { $0.adminPort = UInt16(taken) }
        }
        #expect(error?.code == .cannotStart)
        #expect(error?.message.contains("admin") == true, "\(error?.message ?? "")")
    }

    private func expectHealthy(_ running: RunningSyncServer) async throws {
        let admin = try Self.admin(running)
        let deadline = ContinuousClock.now + .seconds(60)
        while try await PlainAnswer.get("/healthz", from: admin).status != 200 {
            guard ContinuousClock.now < deadline else { throw WaitTimeout() }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}

/// A door a thread waits at until the test opens it (at most 60 s, so a test cannot hang).
final class Gate: @unchecked Sendable {
    // Safe to share: both flags are behind `condition`.
    private let condition = NSCondition()
    private var isOpen = false
    private var didEnter = false

    var entered: Bool { condition.withLock { didEnter } }

    func enter() {
        condition.withLock {
            didEnter = true
            condition.broadcast()
        }
    }

    func waitUntilOpen() {
        condition.withLock {
            let deadline = Date().addingTimeInterval(60)
            while !isOpen && condition.wait(until: deadline) {}
        }
    }

    func open() {
        condition.withLock {
            isOpen = true
            condition.broadcast()
        }
    }
}
