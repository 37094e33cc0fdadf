/// What one scenario runs with, resolved from the flags, the profile and the defaults.
struct ScenarioSettings: Sendable {
    var rows: Int
    var writers: Int
    var tasks: Int
    var duration: Double
    var kills: Int
    var maxFaults: Int
    var seed: UInt64
    var brokenWriter: BrokenWriterMode?
    /// Writers write through a `DatabasePool`, with reader threads beside them (migrate-under-load).
    var usesPool = false
    /// The upgrade's rebuild is prepared online first (`prepareMigration`), so that only the
    /// swap holds the writers (migrate-under-load and crash).
    var online = false
    /// Devices of the sync scenario, spread over its three accounts.
    var devices = 8
    /// The sync server's store: PostgreSQL at this URL instead of the embedded SQLite file.
    var postgresURL: String?
    /// A deliberately broken client or server, to show the sync checks can fail.
    var syncBreak: SyncBreak?

    /// Thread writers plus task writers: the size of the seed-row partition.
    var writerCount: Int { writers + tasks }
}

/// The scenarios the harness runs.
enum ScenarioName: String, CaseIterable, Sendable {
    case migrateUnderLoad = "migrate-under-load"
    case crash
    case faults
    case sync
}
