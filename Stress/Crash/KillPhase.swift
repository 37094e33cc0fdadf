/// Where a crash child was when the SIGKILL landed, told from the lines it printed (each is
/// printed just after the event it reports, so a kill in between counts for the earlier phase).
enum KillPhase: String, CaseIterable, Sendable {
    /// Opening the file (WAL recovery after the previous kill) or registering its writers.
    case startup = "startup"
    case beforeUpgrade = "before_upgrade"
    /// `startMigration` called, no step started yet (writes queued before it still running).
    /// `--online`: `prepareMigration` copying the table while the writers write.
    case copy = "copy"
    case upgradeQueued = "upgrade_queued"
    case rebuildStep = "rebuild_step"
    case betweenSteps = "between_steps"
    case addColumnStep = "add_column_step"
    case afterUpgrade = "after_upgrade"
    /// The child ended before the kill (an error, or it outlived its time limit).
    case exitedBeforeKill = "exited_before_kill"

    /// Whether the upgrade was running.
    var isDuringUpgrade: Bool {
        [.copy, .upgradeQueued, .rebuildStep, .betweenSteps, .addColumnStep].contains(self)
    }

    static func classify(_ content: ChildTranscript.Content, killed: Bool) -> KillPhase {
        if !killed { return .exitedBeforeKill }
        if !content.phases.contains("load") { return .startup }
        if !content.phases.contains("migrating") {
            return content.phases.contains("copying") ? .copy : .beforeUpgrade
        }
        if content.phases.contains("migrated") || content.committedSteps.contains(UpgradePlan.finalStep) {
            return .afterUpgrade
        }
        guard let running = content.startedSteps.last(where: { !content.committedSteps.contains($0) }) else {
            return content.startedSteps.isEmpty ? .upgradeQueued : .betweenSteps
        }
        return running == UpgradePlan.rebuildStep ? .rebuildStep : .addColumnStep
    }
}
