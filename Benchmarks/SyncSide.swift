import Foundation
import PostgresHarness
import SerialDBSyncServer
import SerialDBSyncWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The sync server side of the sync workloads: a `SyncServer` on a `SQLiteSyncStore` file
/// (WAL, synchronous FULL, as served) or on a `PostgresSyncStore` (a fresh database on
/// ``ScratchPostgres``'s server), spoken to over loopback HTTP with URLSession, in
/// requests (or pages) of 500 rows. Only the HTTP round trips are timed: starting the server,
/// building the request bodies and checking the rows afterwards are not.
enum SyncSide {
    /// Rows per upload request and per fetched page.
    static let batch = 500

    /// One synced table shaped like the benchmark's `t`, one account.
    static let configurationJSON = #"""
        {"tables": [{"name": "t", "scope": "account", "struct_version": 1,
                     "schema": "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)"}],
         "tokens": [{"token": "bench-token", "account": "bench"}]}
        """#

    /// Which store the server keeps its rows in.
    enum Store {
        case sqlite
        case postgres

        /// The workload names' suffix.
        var suffix: String { self == .postgres ? "_postgres" : "" }
    }

    /// Uploads rows `1...rows` in requests of ``batch``.
    static func post(path: String, rows: Int, store: Store = .sqlite) throws -> SideRun {
        try withServer(path: path, store: store) { server, client in
            let bodies = stride(from: 1, through: rows, by: batch).map { first in
                uploadBody(ids: first...min(first + batch - 1, rows))
            }
            var operations = 0
            let cpu = ProcessCPUTime()
            let elapsed = try ContinuousClock().measure {
                for body in bodies {
                    let answer = try client.post("/v1/post-data", body: body)
                    operations += try appliedCount(answer)
                }
            }
            cpu.report("sync_post" + store.suffix, rows: rows, elapsed: elapsed)
            return SideRun(elapsed: elapsed, digest: try digest(server, operations: operations))
        }
    }

    /// Loads rows `1...rows` (untimed), then fetches them from cursor 0 in pages of ``batch``.
    static func fetch(path: String, rows: Int, store: Store = .sqlite) throws -> SideRun {
        try withServer(path: path, store: store) { server, client in
            for first in stride(from: 1, through: rows, by: batch) {
                _ = try client.post("/v1/post-data", body: uploadBody(ids: first...min(first + batch - 1, rows)))
            }
            var pages: [Data] = []
            var cursor: Int64 = 0
            var more = true
            let cpu = ProcessCPUTime()
            let elapsed = try ContinuousClock().measure {
                while more {
                    let page = try client.post(
                        "/v1/fetch-data", body: Data(#"{"table": "t", "since": \#(cursor), "limit": \#(batch)}"#.utf8))
                    pages.append(page)
                    // Only the two cursor fields are read inside the timed loop, as a client
                    // applying pages in the background would before asking for the next.
                    (cursor, more) = try cursorAndMore(page)
                }
            }
            cpu.report("sync_fetch" + store.suffix, rows: rows, elapsed: elapsed)
            var digest = Digest(operations: 0)
            for page in pages {
                for change in try JSONValue.parse(page)["changes"]?.arrayValue ?? [] {
                    add(change["row"], to: &digest)
                    digest.operations += 1
                }
            }
            return SideRun(elapsed: elapsed, digest: digest)
        }
    }

    private static func withServer<T>(
        path: String, store kind: Store, _ body: (SyncServer, BlockingHTTPClient) throws -> T
    ) throws -> T {
        let store: any SyncStore
        switch kind {
        case .sqlite: store = try SQLiteSyncStore(path: path)
        case .postgres: store = try PostgresSyncStore(url: try ScratchPostgres.makeDatabase(prefix: "serialdb_bench"))
        }
        var options = SyncServerOptions()
        options.port = 0
        let server = try SyncServer(
            configuration: try SyncServerConfiguration(json: Data(configurationJSON.utf8)), store: store,
            options: options)
        defer {
            server.stop()
            try? store.close()
        }
        let client = BlockingHTTPClient(baseURL: server.url, token: "bench-token")
        // One untimed call first: a syncing client has its connection open already.
        _ = try client.post("/v1/check-update", body: Data(#"{"tables": []}"#.utf8))
        return try body(server, client)
    }

    private static func uploadBody(ids: ClosedRange<Int>) -> Data {
        var text = #"{"client_id": "bench", "mutations": ["#
        for id in ids {
            if id != ids.lowerBound { text += "," }
            text += #"{"seq": \#(id), "table": "t", "op": "upsert", "base_version": 0, "#
            text += #""row": {"id": \#(id), "a": \#(id), "b": "row-\#(id)", "c": \#(Double(id) * 0.5)}}"#
        }
        return Data((text + "]}").utf8)
    }

    private static func appliedCount(_ answer: Data) throws -> Int {
        let results = try JSONValue.parse(answer)["results"]?.arrayValue ?? []
        guard results.allSatisfy({ $0["status"] == .string("applied") }) else {
            throw BenchError.sync("an upload was not applied: \(String(decoding: answer.prefix(300), as: UTF8.self))")
        }
        return results.count
    }

    private static func cursorAndMore(_ page: Data) throws -> (Int64, Bool) {
        let json = try JSONValue.parse(page)
        guard let cursor = json["version"]?.integerValue, let more = json["has_more"]?.boolValue else {
            throw BenchError.sync("a fetch answered \(String(decoding: page.prefix(300), as: UTF8.self))")
        }
        return (cursor, more)
    }

    /// The rows the store serves, checked like the C side's table.
    static func digest(_ server: SyncServer, operations: Int) throws -> Digest {
        var digest = Digest(operations: operations)
        var since: Int64 = 0
        while true {
            let page = try server.service.store.changes(table: "t", owner: "bench", since: since, limit: 5_000)
            for change in page.changes {
                add(try JSONValue.parse(Array(change.rowJSON.utf8)), to: &digest)
            }
            guard page.hasMore, let last = page.changes.last else { return digest }
            since = last.version
        }
    }

    private static func add(_ row: JSONValue?, to digest: inout Digest) {
        digest.add(
            id: row?["id"]?.integerValue ?? -1, a: row?["a"]?.integerValue ?? -1, b: row?["b"]?.stringValue ?? "",
            c: row?["c"].flatMap { if case .number(let value) = $0 { value } else { nil } } ?? -1)
    }
}

extension JSONValue {
    fileprivate subscript(_ name: String) -> JSONValue? { objectValue?[name] }
}
