/// The command line of `serialdb-sync-server`, as DESIGN.md fixes it.
struct ServerCommandLine {
    /// What to do.
    enum Command: Equatable {
        /// Serve until SIGTERM or SIGINT.
        case serve
        /// Remove tombstones up to a version and raise the purge floor.
        case purgeTombstones(through: Int64)
        /// Print the usage.
        case help
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

    static let usage = """
        usage: serialdb-sync-server --config sync.json (--db server.sqlite | --postgres URL) [--host 127.0.0.1] [--port 8080]
                                    [--postgres-connections 4] [--max-connections-per-address 100]
                                    [--request-timeout 60]
               serialdb-sync-server purge-tombstones --config sync.json (--db FILE | --postgres URL) --through VERSION

        Serves the tables of sync.json to the accounts of its tokens (see the README, "Sync server").
        The first line on standard output is "listening on http://HOST:PORT" (--port 0 picks a free
        port); one line per request goes to standard error. SIGTERM or SIGINT: the requests in
        flight are finished, the store is closed, the exit status is 0.

        --postgres URL keeps the rows in PostgreSQL (postgresql://user:password@host:5432/database),
        where several server processes can share one database; each opens at most
        --postgres-connections connections to it.

        --max-connections-per-address N refuses connections from one client address beyond N
        (default 100, of 1000 in all). --request-timeout SECONDS closes a connection whose request
        has not arrived whole within SECONDS, or whose answer has not been read within as many
        again, however steadily its bytes trickle in (default 60; an idle connection is closed
        after 30).

        purge-tombstones removes the tombstones with a version up to VERSION; clients whose cursor
        is below it are told to fetch again from 0.

        exit status: 0 ok, 1 failed, 2 usage error
        """

    /// Parses the arguments (without the program name); `--flag value` and `--flag=value`.
    /// - Throws: ``UsageError`` naming what is wrong.
    init(arguments: [String]) throws {
        var remaining = arguments[...]
        var purge = false
        var through: Int64?
        if remaining.first == "purge-tombstones" {
            purge = true
            remaining.removeFirst()
        }
        while let argument = remaining.popFirst() {
            var flag = argument
            var inlineValue: String?
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                flag = String(argument[..<equals])
                inlineValue = String(argument[argument.index(after: equals)...])
            }
            func value() throws -> String {
                if let inlineValue { return inlineValue }
                guard let next = remaining.popFirst() else { throw UsageError("\(flag) needs a value") }
                return next
            }
            switch flag {
            case "--config": configPath = try value()
            case "--db": databasePath = try value()
            case "--postgres": postgresURL = try value()
            case "--postgres-connections":
                let text = try value()
                guard let count = Int(text), count >= 1 else {
                    throw UsageError("--postgres-connections needs a number of 1 or more, not `\(text)`")
                }
                postgresConnections = count
            case "--max-connections-per-address":
                maximumConnectionsPerAddress = try Self.positive(flag, try value())
            case "--request-timeout":
                requestTimeoutSeconds = try Self.positive(flag, try value(), unit: "a number of seconds")
            case "--host": host = try value()
            case "--port":
                let text = try value()
                guard let port = UInt16(text) else {
                    throw UsageError("--port needs a port number 0-65535, not `\(text)`")
                }
                self.port = port
            case "--through":
                let text = try value()
                guard let version = Int64(text), version >= 0 else {
                    throw UsageError("--through needs a version (a whole number of 0 or more), not `\(text)`")
                }
                through = version
            case "-h", "--help":
                command = .help
                return
            default:
                throw UsageError("unknown argument `\(argument)`")
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
        if purge {
            guard let through else { throw UsageError("purge-tombstones needs --through VERSION") }
            command = .purgeTombstones(through: through)
        } else if through != nil {
            throw UsageError("--through belongs to purge-tombstones")
        }
    }
}

extension ServerCommandLine {
    /// `text` as a whole number of 1 or more, or a usage error naming `flag`.
    fileprivate static func positive(_ flag: String, _ text: String, unit: String = "a number") throws -> Int {
        guard let number = Int(text), number >= 1 else {
            throw UsageError("\(flag) needs \(unit) of 1 or more, not `\(text)`")
        }
        return number
    }
}

/// A command-line mistake: the message says what is wrong; the usage follows it.
struct UsageError: Error {
    let message: String

    init(_ message: String) {
        self.message = message
    }
}
