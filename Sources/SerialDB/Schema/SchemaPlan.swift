/// What a schema change will do, table by table, before it does it: print it as SQL for a dry
/// run, check what it refuses, then apply it.
///
/// ```swift
/// let plan = try db.planSchemaChange(to: newSchemaSQL, options: options)
/// print(plan.sql)                    // the statements it will run
/// if plan.isRefused { print(plan.refusals) } else { try db.applySchemaChange(plan) }
/// ```
public struct SchemaPlan: Sendable {
    /// One thing the plan does.
    public enum Action: Sendable {
        /// Run one statement (create, drop, add column, create index...).
        case execute(String)
        /// Rebuild a table to a new definition, keeping its rows.
        case rebuild(TableRebuild)
    }

    /// One step: what it does and why.
    public struct Step: Sendable {
        /// A one-line description (`rebuild "player": column score: type INTEGER → REAL`).
        public var summary: String
        /// What runs.
        public var action: Action

        /// The SQL of the step, as a dry run prints it.
        public var statements: [String] {
            switch action {
            case .execute(let sql): return [sql]
            case .rebuild(let rebuild): return rebuild.statements
            }
        }
    }

    /// The steps, in the order they run.
    public var steps: [Step]
    /// Why the change cannot be made as asked, each with what to do. A plan with refusals is
    /// never applied.
    public var refusals: [String]
    /// `PRAGMA schema_version` when planned: applying to a database whose schema changed
    /// since is refused.
    let schemaVersion: Int
    /// The desired schema, to verify the result.
    let desired: DatabaseSchema
    /// Tables whose stored CREATE statement a rename rewrites (rebuilt tables, tables whose
    /// name only changes case): they get back the statement as written once the steps ran.
    var tablesKeptAsWritten: [String] = []

    /// Whether some part of the change is refused.
    public var isRefused: Bool { !refusals.isEmpty }

    /// Whether there is nothing to do.
    public var isEmpty: Bool { steps.isEmpty }

    /// The tables the plan rebuilds.
    public var rebuiltTables: [String] {
        steps.compactMap { step in
            if case .rebuild(let rebuild) = step.action { return rebuild.targetTable }
            return nil
        }
    }

    /// Every statement, one per line, each step introduced by its summary as a comment.
    public var sql: String {
        steps.map { step in
            (["-- " + step.summary] + step.statements.map { $0.hasPrefix("--") ? $0 : $0 + ";" }).joined(
                separator: "\n")
        }.joined(separator: "\n")
    }
}
