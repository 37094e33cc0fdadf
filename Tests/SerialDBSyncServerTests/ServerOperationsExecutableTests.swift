import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

/// The `serialdb-sync-server` executable's operator options: `--admin-port`, `--admin-host`
/// and `--log-format json`.
@Suite(.timeLimit(.minutes(5))) struct ServerOperationsExecutableTests {
    private func files() throws -> (TemporaryDirectory, config: String, db: String) {
        let directory = try TemporaryDirectory()
        let config = directory.path("sync.json")
        try Data(SyncFixtures.configurationJSON.utf8).write(to: URL(fileURLWithPath: config))
        return (directory, config, directory.path("server.sqlite"))
    }

    @Test func jsonLogsOneObjectPerLineWithoutATokenOrARowValue() async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: [
            "--config", config, "--db", db, "--port", "0", "--admin-port", "0", "--log-format", "json",
        ])
        let url = try await server.listeningURL()
        let child = server
        try await waitUntil(timeout: .seconds(60)) { child.standardOutput.split(separator: "\n").count >= 2 }
        let announced = server.standardOutput.split(separator: "\n").map(String.init)
        #expect(
            announced[1].hasPrefix("admin listening on http://127.0.0.1:"), "the default --admin-host: \(announced)")
        let client = SyncHTTPClient(baseURL: url, token: "t-bob")
        let upload = try await client.postData(
            client: "d",
            [
                upsert(1, "note", #"{"id": "x", "title": "hidden"}"#),
                upsert(2, "note", #"{"id": "y", "title": "hidden"}"#),
            ])
        #expect(upload.status == 200)
        #expect(try await client.fetchData("note", since: 0).status == 200)
        #expect(try await SyncHTTPClient(baseURL: url, token: "t-wrong").fetchData("note", since: 0).status == 401)
        #expect(try await PlainAnswer.get("/metrics", from: url).status == 404)
        server.signal(SIGTERM)
        #expect(try await server.exitStatus() == 0)

        let lines = server.standardError.split(separator: "\n").map(String.init)
        let objects = try lines.map { line in
            try #require(try JSONValue.parse(Data(line.utf8)).objectValue, "not a JSON object: \(line)")
        }
        let requests = objects.filter { $0["call"] != nil }
        #expect(requests.count == 4, "\(lines)")
        for entry in requests {
            for key in ["time", "call", "account", "status", "duration", "rows"] {
                #expect(entry[key] != nil, "\(key) in \(entry)")
            }
            guard case .number(let seconds)? = entry["duration"] else {
                Issue.record("duration is not a number of seconds: \(entry)")
                continue
            }
            #expect(seconds >= 0 && seconds < 60)
            #expect(entry["time"]?.stringValue?.hasSuffix("Z") == true)
        }
        let summary = requests.map {
            "\($0["call"]?.stringValue ?? "?") \($0["account"]?.stringValue ?? "-") \($0["status"]?.integerValue ?? 0) "
                + "\($0["rows"]?.integerValue ?? -1)"
        }
        #expect(summary == ["post-data bob 200 2", "fetch-data bob 200 2", "fetch-data - 401 0", "other - 404 0"])
        #expect(objects.contains { $0["message"]?.stringValue == "stopped" }, "the lifecycle lines are JSON too")
        let log = server.standardError
        #expect(!log.contains("t-bob") && !log.contains("t-wrong") && !log.contains("hidden"))
    }

    @Test func theAdminListenerIsAnnouncedOnTheSecondLineAndServesItsPaths() async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: [
            "--config", config, "--db", db, "--port", "0", "--admin-port", "0", "--admin-host", "127.0.0.1",
        ])
        let url = try await server.listeningURL()
        let child = server
        try await waitUntil(timeout: .seconds(60)) { child.standardOutput.split(separator: "\n").count >= 2 }
        let lines = server.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines[0] == "listening on \(url.absoluteString)")
        let prefix = "admin listening on http://127.0.0.1:"
        #expect(lines[1].hasPrefix(prefix), "\(lines)")
        let admin = try #require(URL(string: String(lines[1].dropFirst("admin listening on ".count))))
        #expect(admin.port != url.port)
        #expect(try await PlainAnswer.get("/healthz", from: admin).status == 200)
        let metrics = try await PlainAnswer.get("/metrics", from: admin)
        #expect(metrics.status == 200 && metrics.body.contains("# TYPE serialdb_sync_requests_total counter"))
        #expect(try await PlainAnswer.get("/", from: admin).body.contains("<h1>SerialDB sync server</h1>"))
        for path in ["/metrics", "/healthz", "/"] {
            #expect(try await PlainAnswer.get(path, from: url).status == 404, "\(path) on the public port")
        }
        server.signal(SIGTERM)
        #expect(try await server.exitStatus() == 0)
        // The text log stays the default.
        #expect(server.standardError.contains("GET /metrics account=- status=404"))
    }

    @Test func withoutAnAdminPortOnlyThePublicLineIsPrinted() async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: ["--config", config, "--db", db, "--port", "0"])
        _ = try await server.listeningURL()
        server.signal(SIGTERM)
        #expect(try await server.exitStatus() == 0)
        #expect(server.standardOutput.split(separator: "\n").count == 1, "\(server.standardOutput)")
        #expect(!server.standardOutput.contains("admin"))
    }

    @Test(arguments: [
        (["--admin-host", "127.0.0.1"], "--admin-host needs --admin-port"),
        (["--admin-port", "http"], "--admin-port needs a port number"),
        (["--log-format", "xml"], "--log-format needs text or json"),
    ])
    func badOperatorOptionsAreUsageErrors(_ extra: [String], _ message: String) async throws {
        let (directory, config, db) = try files()
        _ = directory
        let server = try ServerProcess(arguments: ["--config", config, "--db", db] + extra)
        #expect(try await server.exitStatus() == 2)
        #expect(server.standardError.contains(message), "\(server.standardError)")
    }
}
