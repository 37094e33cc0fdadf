import Foundation
import HarnessSupport
import SerialDBSyncServer
import SerialDBSyncWire

/// `bench --scale`: how the sync server's costs move as its store fills, the way an operator
/// sizes a deployment. Each store is grown to each size in turn (see ``ScaleStore``) over
/// many accounts, and at each size the server, over loopback HTTP, is timed on uploads,
/// incremental fetches, check-updates and one account's first fetch. Every answer is checked
/// against the rows the series put there.
enum ScaleSeries {
    /// The sizes and sample counts.
    struct Settings {
        var sizes = [10_000, 100_000, 1_000_000]
        var accounts = 1_000
        /// Accounts `acct0`... that take the uploads; the others are sampled by fetches and checks.
        var uploadAccounts = 10
        var uploadRequests = 30
        var samples = 200
        /// The rows of account `first`, loaded before the first size and fetched whole at each.
        var firstFetchRows = 2_000

        /// `--quick`: sizes and counts small enough to check in seconds that the series runs.
        static let quick = Settings(
            sizes: [2_000, 20_000], accounts: 100, uploadAccounts: 4, uploadRequests: 2, samples: 20,
            firstFetchRows: 200)
    }

    /// The configuration: table `t` shaped like the benchmark's, account scope; one token per account.
    private static func configuration(_ settings: Settings) throws -> SyncServerConfiguration {
        var tokens = ["token-first": "first"]
        for account in 0..<settings.accounts {
            tokens["token-acct\(account)"] = "acct\(account)"
        }
        let table = try SyncTable(
            name: "t", scope: .account, structVersion: 1,
            schema: "CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL)")
        return try SyncServerConfiguration(tables: [table], tokens: tokens)
    }

    /// Runs the series on `store`, printing progress; returns one point per size.
    static func run(
        _ kind: SyncSide.Store, settings: Settings, directory: String, progress: (String) -> Void
    ) throws -> [ScalePoint] {
        let store = try ScaleStore(kind, in: directory)
        defer { try? store.close() }
        var options = SyncServerOptions()
        options.port = 0
        let server = try SyncServer(configuration: try configuration(settings), store: store.store, options: options)
        defer { server.stop() }
        var run = Run(settings: settings, store: store, baseURL: server.url)
        try store.grow(versions: 1...settings.firstFetchRows, accounts: settings.accounts, owner: "first")
        run.rows = settings.firstFetchRows
        run.version = settings.firstFetchRows
        var points: [ScalePoint] = []
        for size in settings.sizes {
            let started = ContinuousClock.now
            try run.grow(to: size)
            progress(
                "bench: \(store.name): grown to \(ScaleTable.grouped(size)) rows in "
                    + ResultTable.format(ContinuousClock.now - started))
            let point = try run.measure()
            progress(
                String(
                    format: "bench: %@ at %@ rows: upload %.0f rows/s, fetch %.2f/%.2f ms, check %.2f/%.2f ms, "
                        + "first fetch %.1f ms", store.name, ScaleTable.grouped(point.rows), point.uploadRowsPerSecond,
                    point.fetch.p50, point.fetch.p99, point.check.p50, point.check.p99, point.firstFetch))
            points.append(point)
        }
        return points
    }

    /// The state of one store's series: what it holds, so that every answer can be checked.
    private struct Run {
        let settings: Settings
        let store: ScaleStore
        let baseURL: URL
        /// Rows stored.
        var rows = 0
        /// The counter: the last version given.
        var version = 0
        /// The last grown versions: every sampled account has rows there, at its residue.
        var lastGrown = 0...0
        /// The upload requests sent so far (their seqs and keys are new each time).
        var uploads = 0
        var random = SeededRandom(seed: 27)

        mutating func grow(to size: Int) throws {
            guard size > rows else { return }
            let versions = (version + 1)...(version + size - rows)
            try store.grow(versions: versions, accounts: settings.accounts)
            lastGrown = versions
            version = versions.upperBound
            rows = size
        }

        func client(_ account: String) -> BlockingHTTPClient {
            BlockingHTTPClient(baseURL: baseURL, token: "token-\(account)")
        }

        /// The highest version an account sampled by fetches holds: the last grown version at its residue.
        func top(of account: Int) -> Int {
            lastGrown.upperBound - ((lastGrown.upperBound - account) % settings.accounts + settings.accounts)
                % settings.accounts
        }

        mutating func measure() throws -> ScalePoint {
            let measuredRows = rows
            let sampled = (0..<settings.samples).map { _ in
                Int.random(in: settings.uploadAccounts..<settings.accounts, using: &random)
            }
            // Untimed: the connection is open, and each pooled session has prepared its statements.
            for account in sampled.prefix(8) {
                _ = try checkUpdate(account)
                _ = try incrementalFetch(account)
            }
            var checks: [Double] = []
            var fetches: [Double] = []
            for account in sampled {
                checks.append(try checkUpdate(account))
                fetches.append(try incrementalFetch(account))
            }
            var firstFetches: [Double] = []
            for _ in 0..<3 {
                firstFetches.append(try firstFetch())
            }
            // Untimed: one upload first, as for the reads.
            _ = try upload(account: 0)
            var uploadTimes: [Double] = []
            for request in 0..<settings.uploadRequests {
                uploadTimes.append(try upload(account: request % settings.uploadAccounts))
            }
            let uploaded = (settings.uploadRequests + 1) * SyncSide.batch
            rows += uploaded
            version += uploaded
            return ScalePoint(
                store: store.name, rows: measuredRows,
                uploadRowsPerSecond: Double(SyncSide.batch) / (Samples.median(of: uploadTimes) / 1000),
                fetch: .init(fetches), check: .init(checks), firstFetch: Samples.median(of: firstFetches))
        }

        /// One check-update naming the account's current cursor; checks the version it answers.
        func checkUpdate(_ account: Int) throws -> Double {
            let top = top(of: account)
            let body = Data(#"{"tables": [{"table": "t", "struct_version": 1, "version": \#(top)}]}"#.utf8)
            let (answer, milliseconds) = try timed { try client("acct\(account)").post("/v1/check-update", body: body) }
            let entry = try JSONValue.parse(answer).objectValue?["tables"]?.arrayValue?.first?.objectValue
            guard entry?["version"]?.integerValue == Int64(top), entry?["data_changed"] == .bool(false) else {
                throw BenchError.sync(
                    "check-update for acct\(account) answered \(String(decoding: answer, as: UTF8.self))")
            }
            return milliseconds
        }

        /// A fetch from three changes back; checks that exactly those three come.
        func incrementalFetch(_ account: Int) throws -> Double {
            let top = top(of: account)
            let since = top - 3 * settings.accounts
            guard since - settings.accounts >= lastGrown.lowerBound - 1 else {
                throw BenchError.setup("each size must grow by at least \(4 * settings.accounts) rows")
            }
            let body = Data(#"{"table": "t", "since": \#(since), "limit": \#(SyncSide.batch)}"#.utf8)
            let (answer, milliseconds) = try timed { try client("acct\(account)").post("/v1/fetch-data", body: body) }
            let page = try JSONValue.parse(answer).objectValue
            let versions = page?["changes"]?.arrayValue?.compactMap { $0.objectValue?["version"]?.integerValue }
            let expected = (1...3).map { Int64(since + $0 * settings.accounts) }
            guard versions == expected, page?["has_more"] == .bool(false) else {
                throw BenchError.sync(
                    "fetch-data for acct\(account) since \(since) answered \(String(decoding: answer.prefix(300), as: UTF8.self))"
                )
            }
            return milliseconds
        }

        /// Account `first`'s rows from cursor 0, page after page; checks their count.
        func firstFetch() throws -> Double {
            let client = client("first")
            var cursor: Int64 = 0
            var count = 0
            var total = 0.0
            while true {
                let body = Data(#"{"table": "t", "since": \#(cursor), "limit": \#(SyncSide.batch)}"#.utf8)
                let (answer, milliseconds) = try timed { try client.post("/v1/fetch-data", body: body) }
                total += milliseconds
                let page = try JSONValue.parse(answer).objectValue
                count += page?["changes"]?.arrayValue?.count ?? 0
                guard let next = page?["version"]?.integerValue, let more = page?["has_more"]?.boolValue else {
                    throw BenchError.sync(
                        "a first fetch answered \(String(decoding: answer.prefix(300), as: UTF8.self))")
                }
                cursor = next
                if !more { break }
            }
            guard count == settings.firstFetchRows else {
                throw BenchError.sync("the first fetch brought \(count) rows, expected \(settings.firstFetchRows)")
            }
            return total
        }

        /// One request of new rows from an upload account; checks that each was applied.
        mutating func upload(account: Int) throws -> Double {
            uploads += 1
            var text = #"{"client_id": "device", "mutations": ["#
            for index in 0..<SyncSide.batch {
                // Above every grown seq and key: new for the store.
                let number = 1_000_000_000_000 + uploads * SyncSide.batch + index
                if index > 0 { text += "," }
                text += #"{"seq": \#(number), "table": "t", "op": "upsert", "base_version": 0, "#
                text += #""row": {"id": \#(number), "a": \#(index), "b": "row-\#(number)", "c": 0.5}}"#
            }
            let body = Data((text + "]}").utf8)
            let (answer, milliseconds) = try timed { try client("acct\(account)").post("/v1/post-data", body: body) }
            let results = try JSONValue.parse(answer).objectValue?["results"]?.arrayValue ?? []
            guard results.count == SyncSide.batch,
                results.allSatisfy({ $0.objectValue?["status"] == .string("applied") })
            else {
                throw BenchError.sync("an upload answered \(String(decoding: answer.prefix(300), as: UTF8.self))")
            }
            return milliseconds
        }

        private func timed(_ body: () throws -> Data) throws -> (Data, Double) {
            var answer = Data()
            let elapsed = try ContinuousClock().measure { answer = try body() }
            return (answer, elapsed.milliseconds)
        }
    }
}
