import Foundation

/// The admin listener's `GET /`: one page of plain HTML and inline CSS (no script, no external
/// asset) for the people who run the server. It shows counts, names and the server's own error
/// messages, never a token, a secret or a row's value; every name in it is HTML-escaped.
struct SyncStatusPage {
    /// The windows of the request table, in seconds.
    static let windows: [(label: String, seconds: TimeInterval)] = [
        ("last 1 min", 60), ("last 5 min", 300), ("last 15 min", 900),
    ]

    let metrics: SyncMetricsSnapshot
    /// Per window of ``windows``, the requests answered in it.
    let recent: [[RequestHistory.RequestKey: Int]]
    let tables: [SyncTable]
    /// The store's counts, or why there are none (it failed, or did not answer in time).
    let summary: Result<SyncStoreSummary, StoreUnavailable>
    let currentVersion: Int64?
    let errors: [RecentErrors.Entry]
    let publicURL: URL

    /// Why the store's counts are missing: a word or two for its card, and the whole story
    /// (the store's own message) for the line under the cards, which has the room for it.
    struct StoreUnavailable: Error {
        let state: String
        let detail: String
    }

    var html: String {
        var page = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>SerialDB sync server</title>
            <style>\(Self.style)</style></head>
            <body><main>
            <header><h1>SerialDB sync server</h1>
            <p class="meta">serving <code>\(publicURL.absoluteString.htmlEscaped)</code> · up \(Self.duration(metrics.uptime))
             · version \(currentVersion.map(String.init) ?? "unknown")</p></header>

            """
        page += cards
        page += requestTable
        page += tableSection
        page += errorSection
        page += """
            <footer>Generated \(Self.timestamp(Date())) (UTC). Windows are exact to within \
            \(Int(RequestHistory.interval)) s; the counts since start are also in <code>/metrics</code>.</footer>
            </main></body></html>

            """
        return page
    }

    private var cards: String {
        let storeCard: String
        var problem = ""
        switch summary {
        case .success: storeCard = Self.card("Store", "answering", good: true)
        case .failure(let unavailable):
            storeCard = Self.card("Store", unavailable.state, good: false)
            problem = "<p class=\"problem\">\(unavailable.detail.htmlEscaped)</p>\n"
        }
        return """
            <section class="cards">
            \(storeCard)
            \(Self.card("Connections", String(metrics.openConnections)))
            \(Self.card("Uploaded", String(metrics.rowsUploaded)))
            \(Self.card("Served", String(metrics.rowsServed)))
            \(Self.card("Conflicts", String(metrics.conflicts)))
            \(Self.card("Rejections", String(metrics.rejections)))
            \(Self.card("Store errors", String(metrics.storeErrors), good: metrics.storeErrors == 0))
            </section>
            \(problem)
            """
    }

    private var requestTable: String {
        let total = Dictionary(
            metrics.requestCounts.map { (RequestHistory.RequestKey(call: $0.call, status: $0.status), $0.count) },
            uniquingKeysWith: +)
        var rows = ""
        for key in total.keys.sorted() {
            let status = key.status
            let kind = status < 300 ? "ok" : status < 500 ? "client" : "server"
            rows += "<tr><td>\(key.call.rawValue)</td><td><span class=\"status \(kind)\">\(status)</span></td>"
            for window in recent { rows += "<td class=\"n\">\(window[key] ?? 0)</td>" }
            rows += "<td class=\"n\">\(total[key] ?? 0)</td></tr>\n"
        }
        if rows.isEmpty {
            rows = "<tr><td colspan=\"\(3 + Self.windows.count)\" class=\"none\">No request yet.</td></tr>\n"
        }
        let heads = Self.windows.map { "<th class=\"n\">\($0.label)</th>" }.joined()
        return """
            <section><h2>Requests</h2>
            <table><thead><tr><th>call</th><th>status</th>\(heads)<th class="n">since start</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></section>

            """
    }

    private var tableSection: String {
        let counts = try? summary.get()
        var rows = ""
        for table in tables {
            let held = counts?.tables[table.name]
            let number = { (value: Int64?) in counts == nil ? "–" : String(value ?? 0) }
            rows += "<tr><td><code>\(table.name.htmlEscaped)</code></td><td>\(table.scope.rawValue)</td>"
            rows += "<td class=\"n\">\(table.structVersion)</td>"
            rows += "<td class=\"n\">\(number(held.map { Int64($0.rows) }))</td>"
            rows += "<td class=\"n\">\(number(held.map { Int64($0.tombstones) }))</td>"
            rows += "<td class=\"n\">\(number(held?.highestVersion))</td></tr>\n"
        }
        let accounts = counts.map { String($0.accounts) } ?? "unknown (the store did not answer)"
        return """
            <section><h2>Tables</h2>
            <table><thead><tr><th>table</th><th>scope</th><th class="n">struct_version</th><th class="n">rows</th>\
            <th class="n">tombstones</th><th class="n">highest version</th></tr></thead>
            <tbody>
            \(rows)</tbody></table>
            <p>Accounts holding rows: <strong>\(accounts)</strong></p></section>

            """
    }

    private var errorSection: String {
        guard !errors.isEmpty else {
            return "<section><h2>Last errors</h2><p class=\"none\">None since the server started.</p></section>\n"
        }
        var rows = ""
        for error in errors {
            // The time and the call on one line each: the message takes the width that is left.
            rows += "<tr><td class=\"nowrap\">\(Self.timestamp(error.time))</td>"
            rows += "<td class=\"nowrap\">\(error.call.rawValue)</td>"
            rows += "<td>\((error.account ?? "–").htmlEscaped)</td><td class=\"n\">\(error.status)</td>"
            rows += "<td class=\"message\">\(error.message.htmlEscaped)</td></tr>\n"
        }
        return """
            <section><h2>Last errors</h2>
            <table><thead><tr><th>time (UTC)</th><th>call</th><th>account</th><th class="n">status</th>\
            <th>what failed</th></tr></thead>
            <tbody>
            \(rows)</tbody></table></section>

            """
    }

    private static func card(_ title: String, _ value: String, good: Bool? = nil) -> String {
        let tone = good.map { $0 ? " good" : " bad" } ?? ""
        // A word ("not answering") is set smaller than a count, so that it fits the narrowest card.
        let kind = value.allSatisfy(\.isNumber) ? "value" : "value word"
        return
            "<div class=\"card\(tone)\"><div class=\"label\">\(title)</div><div class=\"\(kind)\">\(value.htmlEscaped)</div></div>"
    }

    /// `3 d 4 h`, `2 h 5 min`, `4 min 12 s`, `9 s`.
    static func duration(_ seconds: TimeInterval) -> String {
        let total = Int(max(0, seconds))
        let (days, hours, minutes, rest) = (total / 86_400, total / 3_600 % 24, total / 60 % 60, total % 60)
        if days > 0 { return "\(days) d \(hours) h" }
        if hours > 0 { return "\(hours) h \(minutes) min" }
        if minutes > 0 { return "\(minutes) min \(rest) s" }
        return "\(rest) s"
    }

    private static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(dateSeparator: .dash, dateTimeSeparator: .space, timeZone: .gmt).format(date)
            .replacingOccurrences(of: "Z", with: "")
    }

    private static let style = """
        :root{color-scheme:light;--ink:#1d2430;--muted:#5b6575;--line:#dde2ea;--bg:#f5f7fa;--card:#fff;\
        --good:#1f7a4d;--bad:#b3261e;--accent:#2f5fd0}
        *{box-sizing:border-box}
        body{margin:0;background:var(--bg);color:var(--ink);\
        font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
        main{max-width:1040px;margin:0 auto;padding:28px 24px 40px}
        h1{font-size:24px;margin:0 0 4px}
        h2{font-size:17px;margin:28px 0 10px;color:var(--ink)}
        .meta{margin:0;color:var(--muted)}
        code{font:13px/1.4 ui-monospace,"DejaVu Sans Mono",monospace;background:#eef1f6;padding:1px 5px;\
        border-radius:4px;word-break:break-all}
        .cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(125px,1fr));gap:10px;margin-top:20px}
        .card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 12px}
        .card .label{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em}
        .card .value{font-size:20px;font-weight:600;font-variant-numeric:tabular-nums;margin-top:2px}
        .card .value.word{font-size:16px;line-height:30px;overflow-wrap:anywhere}
        .card.good .value{color:var(--good)}
        .card.bad .value{color:var(--bad)}
        table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);\
        border-radius:8px;overflow:hidden}
        th,td{padding:7px 12px;text-align:left;border-bottom:1px solid var(--line);vertical-align:top}
        th{font-size:12px;color:var(--muted);text-transform:uppercase;letter-spacing:.04em;background:#fafbfd}
        tbody tr:last-child td{border-bottom:none}
        tbody tr:nth-child(even){background:#fbfcfe}
        .n{text-align:right;font-variant-numeric:tabular-nums}
        .none{color:var(--muted)}
        .nowrap{white-space:nowrap}
        .problem{margin:10px 0 0;padding:8px 12px;border:1px solid #f0c4bf;border-radius:8px;background:#fdf1f0;\
        color:var(--bad);font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;word-break:break-word}
        .message{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:13px;word-break:break-word}
        .status{display:inline-block;min-width:3em;text-align:center;border-radius:10px;padding:0 8px;\
        font-size:13px;font-weight:600}
        .status.ok{background:#e3f4ea;color:var(--good)}
        .status.client{background:#fff2d6;color:#8a5a00}
        .status.server{background:#fbe3e1;color:var(--bad)}
        footer{margin-top:28px;color:var(--muted);font-size:13px}
        """
}
