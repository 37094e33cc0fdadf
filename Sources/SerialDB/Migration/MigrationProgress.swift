/// Where a running migration stands: reported when each step starts and ends, and while a
/// long step (a table rebuild) copies rows.
public struct MigrationProgress: Sendable, Equatable {
    /// What just happened.
    public enum Event: Sendable, Equatable {
        /// The step started.
        case stepStarted
        /// The step reported work done (rows copied of a total).
        case stepProgress
        /// The step committed.
        case stepCommitted
    }

    /// What just happened.
    public var event: Event
    /// The identifier of the step being applied.
    public var migration: String
    /// Steps committed so far in this run.
    public var completedSteps: Int
    /// Steps this run applies (those not applied before it started).
    public var totalSteps: Int
    /// Units (rows) the step reported done, when it reports any.
    public var completedUnits: Int?
    /// Units (rows) the step expects to do, when it reports any.
    public var totalUnits: Int?
    /// With ``Event/stepCommitted`` of a step that `prepareMigration` copied: whether the
    /// upgrade swapped that copy in, or why it rebuilt the tables instead. Nil otherwise.
    public var preparedCopy: PreparedCopyOutcome?

    /// Creates a progress report.
    public init(
        event: Event, migration: String, completedSteps: Int, totalSteps: Int, completedUnits: Int? = nil,
        totalUnits: Int? = nil, preparedCopy: PreparedCopyOutcome? = nil
    ) {
        self.event = event
        self.migration = migration
        self.completedSteps = completedSteps
        self.totalSteps = totalSteps
        self.completedUnits = completedUnits
        self.totalUnits = totalUnits
        self.preparedCopy = preparedCopy
    }
}
