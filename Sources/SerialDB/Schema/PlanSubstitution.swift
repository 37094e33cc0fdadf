/// Steps of a schema plan that someone else already did part of: ``Database`` asks it before
/// running each rebuild and each statement. The online swap of a prepared step is one.
protocol PlanSubstitution: Sendable {
    /// Whether it replaced the rebuild (then the plan does not run it).
    func replaces(_ rebuild: TableRebuild, in db: Database) throws -> Bool
    /// Whether it replaced the statement (then the plan does not run it).
    func replaces(_ sql: String, in db: Database) throws -> Bool
}
