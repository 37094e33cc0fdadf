/// The scenarios the harness runs.
enum ScenarioName: String, CaseIterable, Sendable {
    case migrateUnderLoad = "migrate-under-load"
    case crash
    case faults
}
