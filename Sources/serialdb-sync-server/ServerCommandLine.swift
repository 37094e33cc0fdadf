import Foundation
import SerialDBSyncServer
import ToolArguments

/// The command line of `serialdb-sync-server` (the README's "Sync server" describes it).
struct ServerCommandLine {
    /// What to do.
    enum Command: Equatable {
        /// Serve until SIGTERM or SIGINT; SIGHUP reloads the configuration.
        case serve
        /// Remove tombstones up to a version and raise the purge floor, and drop the upload
        /// results older than the retention window (seconds).
        case purgeTombstones(through: Int64, retention: TimeInterval)
    }

    var command = Command.serve
    var configPath = ""
    var databasePath: String?
    var postgresURL: String?
    var postgresConnections: Int?
    var host = "127.0.0.1"
    var port: UInt16 = 8080
    var maximumConnectionsPerAddress: Int?
    var requestTimeoutSeconds: Int?
    var adminHost: String?
    var adminPort: UInt16?
    var logFormat = LogFormat.text

    /// How the request log is written on standard error.
    enum LogFormat: String {
        /// `POST /v1/post-data account=alice status=200 3.2ms`.
        case text
        /// One JSON object per line.
        case json
    }

    static let usage = """
        usage: serialdb-sync-server --config sync.json (--db server.sqlite | --postgres URL) [--host 127.0.0.1] [--port 8080]
                                    [--postgres-connections 4] [--max-connections-per-address 100]
                                    [--request-timeout 60] [--admin-port N [--admin-host 127.0.0.1]]
                                    [--log-format text|json]
               serialdb-sync-server purge-tombstones --config sync.json (--db FILE | --postgres URL) --through VERSION
                                    [--retention 7d]

        Serves the tables of sync.json to the accounts of its tokens (see the README, "Sync server").
        The first line on standard output is "listening on http://HOST:PORT" (--port 0 picks a free
        port); one line per request goes to standard error. SIGTERM or SIGINT: the requests in
        flight are finished, the store is closed, the exit status is 0. SIGHUP reloads sync.json
        (tokens, JWT keys, table definitions) without a restart; a file that does not parse or
        validate is refused with one line on standard error, and the running configuration kept.

        --postgres URL keeps the rows in PostgreSQL (postgresql://user:password@host:5432/database),
        where several server processes can share one database; each opens at most
        --postgres-connections connections to it.

        --max-connections-per-address N refuses connections from one client address beyond N
        (default 100, of 1000 in all). --request-timeout SECONDS closes a connection whose request
        has not arrived whole within SECONDS, or whose answer has not been read within as many
        again, however steadily its bytes trickle in (default 60; an idle connection is closed
        after 30).

        --admin-port N starts a second listener, on --admin-host (default 127.0.0.1; --admin-port 0
        picks a free port), printed on standard output after the first line as "admin listening on
        http://HOST:PORT": GET /metrics (Prometheus), /healthz (200, or 503 when the store does not
        answer within a second) and / (a status page). The public port answers 404 to these paths.

        --log-format json writes each line of standard error as one JSON object (time, call,
        account, status, duration in seconds, rows); text is the default. Neither holds a token or
        a row value.

        purge-tombstones removes the tombstones with a version up to VERSION; clients whose cursor
        is below it are told to fetch again from 0. It also drops the upload results recorded longer
        ago than --retention (7d, 36h, 90m or 90s; default 7d): a client retrying one of those seqs
        is answered "duplicate".

        exit status: 0 ok, 1 failed, 2 usage error
        """

    /// Parses the arguments (without the program name) the way every SerialDB tool does (see
    /// ``ArgumentReader``): an option is one `case`.
    /// - Throws: ``UsageError`` naming what is wrong.
    init(_ reader: inout ArgumentReader) throws {
        var purge = false
        var through: Int64?
        var retention: TimeInterval?
        while let argument = try reader.next() {
            switch argument {
            case .operand("purge-tombstones") where !purge: purge = true
            case .option("--config"): configPath = try reader.value()
            case .option("--db"): databasePath = try reader.value()
            case .option("--postgres"): postgresURL = try reader.value()
            case .option("--postgres-connections"): postgresConnections = try reader.wholeNumber(atLeast: 1)
            case .option("--max-connections-per-address"):
                maximumConnectionsPerAddress = try reader.wholeNumber(atLeast: 1)
            case .option("--request-timeout"): requestTimeoutSeconds = try reader.wholeNumber(atLeast: 1)
            case .option("--admin-port"): adminPort = try reader.value("a port number 0-65535") { UInt16($0) }
            case .option("--admin-host"): adminHost = try reader.value()
            case .option("--log-format"):
                logFormat = try reader.value("text or json") { LogFormat(rawValue: $0) }
            case .option("--host"): host = try reader.value()
            case .option("--port"): port = try reader.value("a port number 0-65535") { UInt16($0) }
            case .option("--through"):
                let version: Int64 = try reader.value("a version (a whole number of 0 or more)") { text in
                    Int64(text).flatMap { $0 >= 0 ? $0 : nil }
                }
                through = version
            case .option("--retention"): retention = try reader.value("a duration such as 7d, 36h, 90s", Self.duration)
            default: throw reader.unexpected(argument)
            }
        }
        guard !configPath.isEmpty else { throw UsageError("--config FILE is required") }
        switch (databasePath, postgresURL) {
        case (nil, nil): throw UsageError("give the store: --db FILE or --postgres URL")
        case (.some, .some): throw UsageError("give one store: --db FILE or --postgres URL, not both")
        default: break
        }
        if postgresConnections != nil && postgresURL == nil {
            throw UsageError("--postgres-connections belongs to --postgres URL")
        }
        if purge && (maximumConnectionsPerAddress != nil || requestTimeoutSeconds != nil) {
            throw UsageError(
                "--max-connections-per-address and --request-timeout belong to serving, not purge-tombstones")
        }
        if purge && (adminPort != nil || adminHost != nil) {
            throw UsageError("--admin-port and --admin-host belong to serving, not purge-tombstones")
        }
        if purge && logFormat != .text {
            throw UsageError("--log-format belongs to serving, not purge-tombstones")
        }
        if adminHost != nil && adminPort == nil {
            throw UsageError("--admin-host needs --admin-port N (0 picks a free port)")
        }
        if purge {
            guard let through else { throw UsageError("purge-tombstones needs --through VERSION") }
            command = .purgeTombstones(through: through, retention: retention ?? SyncService.defaultResultRetention)
        } else if through != nil || retention != nil {
            throw UsageError("--through and --retention belong to purge-tombstones")
        }
    }

    /// A duration written as a whole number and a unit (`7d`, `36h`, `90m`, `90s`), in seconds.
    static func duration(_ text: String) -> TimeInterval? {
        let units: [Character: Double] = ["d": 86_400, "h": 3_600, "m": 60, "s": 1]
        guard let unit = text.last.flatMap({ units[$0] }), let count = UInt32(text.dropLast()) else { return nil }
        return Double(count) * unit
    }
}
