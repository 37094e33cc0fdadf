import Foundation
import SerialDBSyncServer
import ToolArguments

/// The sync scenario's server process (hidden subcommand `sync-server-child`): `SyncServer` from
/// the library on a free port, its store wrapped in the harness's audit (and, with `--break`, a
/// broken store). The first line on standard output is `listening on URL`; then it serves until
/// the parent kills it, or ends by itself once the parent is gone.
enum SyncServerChild {
    static let subcommand = "sync-server-child"

    /// The command line the parent passes.
    static func arguments(config: String, store: SyncStoreLocation, audit: String, syncBreak: SyncBreak?) -> [String] {
        var arguments = [subcommand, "--config", config, "--audit", audit] + store.arguments
        if let syncBreak, syncBreak.isServerSide { arguments += ["--break", syncBreak.rawValue] }
        return arguments
    }

    /// Runs the server and returns its exit status (only when it cannot start, or the parent died).
    static func run(_ arguments: [String]) -> Int32 {
        let values: [String: String]
        do {
            values = try ArgumentReader.optionValues(arguments)
        } catch {
            Console.error("stress \(subcommand): \(error) in \(arguments)")
            return ToolArguments.usageStatus
        }
        let store: SyncStoreLocation
        if let path = values["--db"] {
            store = .file(path)
        } else if let url = values["--postgres"] {
            store = .postgres(url)
        } else {
            Console.error("stress \(subcommand): no store in \(arguments)")
            return ToolArguments.usageStatus
        }
        guard let config = values["--config"], let audit = values["--audit"] else {
            Console.error("stress \(subcommand): bad arguments \(arguments)")
            return ToolArguments.usageStatus
        }
        let parent = getppid()
        do {
            let configuration = try SyncServerConfiguration(contentsOfFile: config)
            var served: any SyncStore = try AuditingSyncStore(store.open(), auditPath: audit)
            if let mode = values["--break"].flatMap(SyncBreak.init(rawValue:)) {
                served = BrokenSyncStore(served, mode: mode)
            }
            var options = SyncServerOptions()
            options.port = 0
            options.threads = 2
            let server = try SyncServer(configuration: configuration, store: served, options: options)
            FileHandle.standardOutput.write(Data("listening on \(server.url.absoluteString)\n".utf8))
            // Killed by the parent; a parent that died without killing it leaves it orphaned,
            // and it must not serve forever.
            while getppid() == parent { Thread.sleep(forTimeInterval: 0.2) }
            return 0
        } catch {
            Console.error("stress \(subcommand): \(error)")
            return 1
        }
    }
}
