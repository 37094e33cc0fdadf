import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

/// The admin listener's status page, loaded by a real browser (headless chromium) over HTTP.
@Suite(.timeLimit(.minutes(5))) struct StatusPageTests {
    /// A table whose name would be markup, and a token and a row value that must never show.
    private static let hostileName = #"odd<b>&"name"#
    private static let token = "t-SECRET-TOKEN-4f1c"
    private static let rowValue = "ROW-VALUE-SENTINEL-77"

    private static func configuration() throws -> SyncServerConfiguration {
        let quoted = hostileName.replacingOccurrences(of: "\"", with: "\"\"")
        let schema = "CREATE TABLE \"\(quoted)\"(id TEXT PRIMARY KEY NOT NULL, v TEXT)"
        let table = try SyncTable(name: hostileName, scope: .account, structVersion: 7, schema: schema)
        let note = try SyncFixtures.configuration().tables[0]
        return try SyncServerConfiguration(tables: [table, note], tokens: [token: "alice", "t-bob": "bob"])
    }

    @Test(arguments: SyncStoreKind.persistent)
    func theStatusPageShowsCountsAndNamesButNeverATokenOrARowValue(_ kind: SyncStoreKind) async throws {
        _ = try HeadlessChromium.executable()
        let running = try RunningSyncServer(kind, configuration: try Self.configuration()) { $0.adminPort = 0 }
        defer { try? running.stop() }
        let admin = try #require(running.server.adminURL)
        let alice = running.client(Self.token)
        let name = JSONWriter.quoted(Self.hostileName)
        let rows = [
            #"{"seq": 1, "table": \#(name), "op": "upsert", "row": {"id": "k1", "v": "\#(Self.rowValue)"}, "base_version": 0}"#,
            #"{"seq": 2, "table": \#(name), "op": "upsert", "row": {"id": "k2", "v": "\#(Self.rowValue)"}, "base_version": 0}"#,
            #"{"seq": 3, "table": \#(name), "op": "upsert", "row": {"id": "k3", "v": null}, "base_version": 0}"#,
            #"{"seq": 4, "table": \#(name), "op": "delete", "key": {"id": "k3"}, "base_version": 3}"#,
        ]
        let upload = try await alice.postData(client: "phone", rows)
        #expect(upload.status == 200)
        #expect(upload["results"]?[3]?["status"] == .string("applied"))
        #expect(try await alice.post("/v1/fetch-data", #"{"table": \#(name), "since": 0}"#).status == 200)
        #expect(
            try await running.bob.postData(client: "tablet", [upsert(1, "note", #"{"id": "n", "title": "t"}"#)])
                .status == 200)

        let dom = try await HeadlessChromium.dumpDOM(admin)
        #expect(dom.contains("<h1>SerialDB sync server</h1>"), "\(dom.prefix(400))")
        #expect(dom.contains("serving <code>\(running.server.url.absoluteString)</code> · up "), "the uptime")
        // The table's row: escaped name, scope, struct_version 7, 2 rows, 1 tombstone, highest version 4.
        #expect(
            dom.contains(
                #"<tr><td><code>odd&lt;b&gt;&amp;"name</code></td><td>account</td><td class="n">7</td>"#
                    + #"<td class="n">2</td><td class="n">1</td><td class="n">4</td></tr>"#), "\(dom)")
        #expect(
            dom.contains(
                #"<tr><td><code>note</code></td><td>account</td><td class="n">1</td>"#
                    + #"<td class="n">1</td><td class="n">0</td><td class="n">5</td></tr>"#), "\(dom)")
        #expect(!dom.contains("<b>"), "the name stayed text")
        #expect(dom.contains("Accounts holding rows: <strong>2</strong>"))
        // post-data answered 200 twice, in every window and since start.
        #expect(
            dom.contains(
                #"<tr><td>post-data</td><td><span class="status ok">200</span></td><td class="n">2</td>"#
                    + #"<td class="n">2</td><td class="n">2</td><td class="n">2</td></tr>"#), "\(dom)")
        #expect(dom.contains("None since the server started."))
        // Never a token, a secret or a row value, in the page as sent either.
        let sent = try await PlainAnswer.get("/", from: admin)
        #expect(sent.contentType == "text/html; charset=utf-8")
        for text in [dom, sent.body] {
            #expect(!text.contains(Self.token) && !text.contains("SECRET"))
            #expect(!text.contains(Self.rowValue))
            #expect(!text.contains("<script"), "no script")
        }
        // Nothing the browser would fetch: no link, image, frame, CSS import or url().
        for fetching in ["src=", "href=", "<link", "@import", "url(", "srcset", "<iframe", "<object"] {
            #expect(!sent.body.contains(fetching), "no external asset: \(fetching)")
        }

        let directory = try TemporaryDirectory()
        let picture = directory.path("status.png")
        try await HeadlessChromium.screenshot(admin, to: picture)
        let png = try Data(contentsOf: URL(fileURLWithPath: picture))
        #expect(
            png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 10_000, "a PNG of the page: \(png.count) bytes")
    }

    /// Names beyond ASCII, and an account whose name would be markup, as the browser shows
    /// them: the table row and the error row (the account of a failed upload) keep every
    /// character, and the markup stays text.
    @Test func nonASCIINamesAndAccountsAreShownAsTheyAreAndEscaped() async throws {
        _ = try HeadlessChromium.executable()
        let table = "café 日記"
        // Markup a browser would take as an element, were it not escaped.
        let account = "zoë <i>ü</i> & 🦊"
        let schema = "CREATE TABLE \"\(table)\"(id TEXT PRIMARY KEY NOT NULL, v TEXT)"
        let configuration = try SyncServerConfiguration(
            tables: [try SyncTable(name: table, scope: .account, structVersion: 2, schema: schema)],
            tokens: ["t-zoe": account])
        let running = try RunningSyncServer(.sqliteFile, configuration: configuration) { $0.adminPort = 0 }
        defer { try? running.stop() }
        let zoe = running.client("t-zoe")
        let upload = try await zoe.postData(client: "d", [upsert(1, table, #"{"id": "ß", "v": "x"}"#)])
        #expect(upload["results"]?[0]?["status"] == .string("applied"))
        try StoreFailureReportTests.refuseWrites(running)
        #expect(try await zoe.postData(client: "d", [upsert(2, table, #"{"id": "é"}"#)]).status == 500)

        let admin = try #require(running.server.adminURL)
        let dom = try await HeadlessChromium.dumpDOM(admin)
        #expect(
            dom.contains(
                #"<tr><td><code>café 日記</code></td><td>account</td><td class="n">2</td><td class="n">1</td>"#),
            "\(dom)")
        #expect(dom.contains("<td>zoë &lt;i&gt;ü&lt;/i&gt; &amp; 🦊</td>"), "\(dom)")
        #expect(!dom.contains("<i>"), "the account stayed text")
        #expect(try await PlainAnswer.get("/", from: admin).body.contains("<td>zoë &lt;i&gt;ü&lt;/i&gt; &amp; 🦊</td>"))
    }
}
