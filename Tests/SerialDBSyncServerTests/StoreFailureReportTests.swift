import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// A real store that refuses a write (a constraint or a trigger the test adds to its row
/// table): the upload is answered 500, counted as a store error in `/metrics`, listed among the
/// last errors of the status page and logged with its cause, and none of these holds the row's
/// value or the token, even where PostgreSQL's own message would quote the failing row.
@Suite(.timeLimit(.minutes(5))) struct StoreFailureReportTests {
    private static let token = "t-TOKEN-SENTINEL-5d2e"
    private static let rowValue = "ROW-VALUE-SENTINEL-93"
    /// The name of the constraint or trigger that refuses the write: the cause the reports name.
    private static let refusal = "test_refuses_writes"

    /// Makes the store's row table refuse every new row.
    static func refuseWrites(_ running: RunningSyncServer) throws {
        switch running.location.kind {
        case .postgres:
            // PostgreSQL's full message would add "DETAIL: Failing row contains (...)".
            let connection = try PostgresConnection(url: running.location.address)
            try connection.execute(
                "ALTER TABLE serialdb_sync_row ADD CONSTRAINT \(refusal) CHECK (version < 0) NOT VALID")
        default:
            let store = try #require(running.store as? SQLiteSyncStore)
            try store.database.write { db in
                try db.execute(
                    sql: """
                        CREATE TRIGGER \(refusal) BEFORE INSERT ON serialdb_sync_row
                        BEGIN SELECT RAISE(ABORT, '\(refusal)'); END
                        """)
            }
        }
    }

    @Test(arguments: SyncStoreKind.persistent)
    func aFailedWriteIsCountedListedAndLoggedWithoutTheRowOrTheToken(_ kind: SyncStoreKind) async throws {
        let configuration = try SyncServerConfiguration(
            tables: try SyncFixtures.configuration().tables, tokens: [Self.token: "alice"])
        let running = try RunningSyncServer(kind, configuration: configuration) { $0.adminPort = 0 }
        defer { try? running.stop() }
        let admin = try #require(running.server.adminURL)
        let alice = running.client(Self.token)
        #expect(try await alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
        try Self.refuseWrites(running)
        let upload = try await alice.postData(
            client: "phone", [upsert(1, "note", #"{"id": "k1", "title": "\#(Self.rowValue)"}"#)])
        #expect(upload.status == 500)
        #expect(upload.errorCode == "internal")

        let metrics = try await ParsedMetrics.parse(try await PlainAnswer.get("/metrics", from: admin).body)
        #expect(metrics.value("serialdb_sync_store_errors_total") == 1)
        #expect(metrics.value("serialdb_sync_requests_total", ["call": "post-data", "status": "500"]) == 1)
        #expect(metrics.value("serialdb_sync_requests_total", ["call": "check-update", "status": "200"]) == 1)
        #expect(metrics.value("serialdb_sync_rows_uploaded_total") == 0)
        #expect(metrics.value("serialdb_sync_current_version") == 0)

        let page = try await PlainAnswer.get("/", from: admin).body
        #expect(page.contains(Self.refusal), "the error is listed: \(page)")
        #expect(!page.contains(Self.rowValue), "the row's value is on the page: \(page)")
        #expect(!page.contains(Self.token))

        // The log line is written after the answer is queued: wait for it.
        let log = running.log
        try await waitUntil(timeout: .seconds(30)) { log.withLock { $0.contains { $0.status == 500 } } }
        let failed = try #require(log.withLock { $0.first { $0.status == 500 } })
        let line = try #require(try JSONValue.parse(Data(failed.json.utf8)).objectValue)
        #expect(line["error"]?.stringValue?.contains(Self.refusal) == true, "\(failed.json)")
        for text in [failed.json, failed.description] {
            #expect(!text.contains(Self.rowValue), "the row's value is logged: \(text)")
            #expect(!text.contains(Self.token))
        }
    }
}
