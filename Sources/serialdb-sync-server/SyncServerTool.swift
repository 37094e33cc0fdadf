import Foundation
import SerialDBSyncServer
import ToolArguments

/// `serialdb-sync-server`: serves table sync over HTTP from an embedded SQLite store or a
/// PostgreSQL database, or purges tombstones. Exit status: 0 ok, 1 failed, 2 usage error.
///
/// `main` is synchronous: it blocks in `sigwait` until told to stop, with SIGTERM, SIGINT and
/// SIGHUP blocked in every thread. SIGHUP reloads the configuration file. A plain signal handler would not do: a process started from a
/// Dispatch thread (as the tests start it) inherits a mask with those signals blocked, and
/// `sigwait` takes them either way.
@main
struct SyncServerTool {
    static func main() {
        let commandLine = ToolArguments.parse(tool: "serialdb-sync-server", usage: ServerCommandLine.usage) { reader in
            try ServerCommandLine(&reader)
        }
        do {
            switch commandLine.command {
            case .serve:
                try serve(commandLine)
            case .purgeTombstones(let through, let retention):
                let store = try openStore(commandLine)
                let (purged, floor) = try store.purgeTombstones(through: through)
                let dropped = try store.purgeResults(olderThan: retention)
                try store.close()
                print(
                    "purged \(purged) tombstone(s); the purge floor is \(floor); dropped \(dropped) expired upload result(s)"
                )
            }
        } catch {
            printError(
                commandLine.logFormat == .json
                    ? SyncRequestLog.jsonMessage("failed: \(error)") : "serialdb-sync-server: \(error)")
            exit(ToolArguments.failure)
        }
        exit(ToolArguments.success)
    }

    private static func openStore(_ commandLine: ServerCommandLine) throws -> any SyncStore {
        if let url = commandLine.postgresURL {
            return try PostgresSyncStore(
                url: url, connections: commandLine.postgresConnections ?? PostgresSyncStore.defaultConnections)
        }
        return try SQLiteSyncStore(path: commandLine.databasePath!)
    }

    private static func serve(_ commandLine: ServerCommandLine) throws {
        // Blocked before any thread starts, so every thread inherits the mask and only
        // sigwait below receives them.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        sigaddset(&signals, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &signals, nil)

        let configuration = try SyncServerConfiguration(contentsOfFile: commandLine.configPath)
        let store = try openStore(commandLine)
        var options = SyncServerOptions()
        options.host = commandLine.host
        options.port = commandLine.port
        if let limit = commandLine.maximumConnectionsPerAddress { options.maximumConnectionsPerAddress = limit }
        if let seconds = commandLine.requestTimeoutSeconds { options.requestTimeoutSeconds = seconds }
        options.adminPort = commandLine.adminPort
        if let host = commandLine.adminHost { options.adminHost = host }
        let json = commandLine.logFormat == .json
        options.log = { entry in printError(json ? entry.json : entry.description) }
        let server = try SyncServer(configuration: configuration, store: store, options: options)
        // Written straight to the file descriptor: a parent reading the pipe sees it at once.
        var announcement = "listening on \(server.url.absoluteString)\n"
        if let admin = server.adminURL { announcement += "admin listening on \(admin.absoluteString)\n" }
        FileHandle.standardOutput.write(Data(announcement.utf8))

        var received: Int32 = 0
        let say = { (message: String) in
            printError(json ? SyncRequestLog.jsonMessage(message) : "serialdb-sync-server: \(message)")
        }
        while sigwait(&signals, &received) == 0, received == SIGHUP {
            reload(server.service, from: commandLine.configPath, say: say)
        }
        say("signal \(received): finishing the requests in flight")
        server.stop()
        try store.close()
        say("stopped")
    }

    /// Re-reads the configuration file and serves it, or keeps the running one: either way one
    /// line on standard error says which.
    private static func reload(_ service: SyncService, from path: String, say: (String) -> Void) {
        do {
            let configuration = try SyncServerConfiguration(contentsOfFile: path)
            try service.reload(configuration)
            let jwt = configuration.jwt.map {
                ", JWT sign-in with " + $0.algorithms.map(\.rawValue).joined(separator: ", ")
            }
            say("reloaded \(path): \(configuration.tables.count) table(s)\(jwt ?? "")")
        } catch {
            // One line, whatever the message holds.
            let reason = "\(error)".split(whereSeparator: \.isNewline).joined(separator: " ")
            say("reload refused, still serving the previous configuration: \(reason)")
        }
    }

    /// Standard error: the request log and failures. One write per line.
    private static func printError(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }
}
