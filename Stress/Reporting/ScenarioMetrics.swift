/// The figures of one scenario, as the JSON report lists them (keys in snake case). Optional
/// figures are left out where they do not apply.
struct ScenarioMetrics: Codable, Sendable {
    var writesAcknowledged = 0
    var writesFound = 0
    var lost = 0
    var duplicated = 0
    var unexpected = 0
    /// Write calls that threw when nothing in the scenario explains it.
    var errors = 0
    var wrongValues = 0
    var seedRowsMissing = 0
    /// Wall-clock time of the whole scenario, setup and checks included.
    var durationMs: Double = 0
    /// Time the writers ran (migrate-under-load).
    var loadMs: Double?
    var rows: Int?
    var writerThreads: Int?
    var writerTasks: Int?
    var populateMs: Double?
    var migrationMs: Double?
    var rebuildStepMs: Double?
    /// `--online`: the copy (`prepareMigration`) and the swap (`startMigration` to done).
    var copyMs: Double?
    var swapMs: Double?
    var writesBlockedByUpgrade: Int?
    var waitP50Ms: Double?
    var waitP99Ms: Double?
    var waitMaxMs: Double?
    var throughputBeforePerS: Double?
    var throughputDuringPerS: Double?
    var throughputAfterPerS: Double?
    var kills: Int?
    var killsByPhase: [String: Int]?
    var stepAfterKill: [String: Int]?
    var inFlightCommitted: Int?
    var integrityFailures: Int?
    var faultRuns: Int?
    var faultsInjected: Int?
    var faultOutcomes: [String: Int]?
    var upgradeWrites: Int?
    var upgradeSyncs: Int?
    /// Writes held by an upgrade that failed, refused with `migrationFailed`, as they must be.
    var refusedWrites: Int?
    /// Reads through the pool (`--pool`), those that saw a schema of no committed step, and
    /// those submitted after the upgrade started that saw an older step.
    var poolReads: Int?
    var readsInconsistent: Int?
    var readsSawOldSchema: Int?
    /// The sync scenario: devices and accounts, the invariants' counts beside `lost`,
    /// `duplicated` and `unexpected`, what the run went through, and sync latency.
    var devices: Int?
    var accounts: Int?
    var diverged: Int?
    var leaked: Int?
    var cursorMismatches: Int?
    var overwritten: Int?
    var conflicts: Int?
    var rejected: Int?
    /// Sync children killed before their sync finished (of `kills`).
    var killsMidSync: Int?
    var serverRestarts: Int?
    /// Syncs that completed during the load, in the harness and in child processes.
    var syncRounds: Int?
    /// Syncs that failed during the load (server down or killed mid-request).
    var syncsFailed: Int?
    /// Rounds of the final quiet syncs, the last of which moved nothing.
    var finalSyncRounds: Int?
    var syncLatencyP50Ms: Double?
    var syncLatencyP99Ms: Double?

    /// Copies the checker's counts.
    mutating func record(_ verification: Verification) {
        writesAcknowledged = verification.acknowledged
        writesFound = verification.found
        lost = verification.lost.count
        duplicated = verification.duplicated.count
        unexpected = verification.unexpected.count
        wrongValues = verification.wrongValues.count
        seedRowsMissing = verification.seedRowsMissing
    }
}
