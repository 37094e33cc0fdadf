import SerialDB
import SerialDBTestSupport
import Testing

extension Database {
    /// `changeSchema`, checking on the way that the plan predicted the outcome: a plan without
    /// refusals must apply, so a migration never fails where the dry run said all was well
    /// (a refused plan is refused by the apply with the plan's own refusals). Suites call this
    /// instead of `changeSchema` so every case they run checks the agreement.
    @discardableResult
    func changeSchemaAsPlanned(
        to sql: String, options: SchemaChangeOptions = SchemaChangeOptions(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SchemaPlan {
        let plan = try planSchemaChange(to: sql, options: options)
        do {
            try applySchemaChange(plan)
        } catch {
            if !plan.isRefused {
                Issue.record(
                    "The plan refused nothing, yet applying it failed: \(error)\nplan:\n\(plan.sql)",
                    sourceLocation: sourceLocation)
            } else if let refusal = error as? SerialDBError {
                #expect(
                    plan.refusals.allSatisfy { refusal.message.contains($0) }, "\(refusal)",
                    sourceLocation: sourceLocation)
            }
            throw error
        }
        #expect(!plan.isRefused, "a refused plan applied", sourceLocation: sourceLocation)
        return plan
    }
}

extension ToolRun {
    /// For a `serialdb plan` run: records an issue unless the `migrate` run with the same
    /// options agrees with it: both succeed, or both are refused (exit 3) with the same
    /// refusals; a migration that fails after a clean plan is a disagreement.
    func checkPlanPredicts(_ migrate: ToolRun, sourceLocation: SourceLocation = #_sourceLocation) {
        func refusals(_ text: String) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix("refused: ") }.map(String.init)
        }
        switch (status, migrate.status) {
        case (0, 0), (2, 2): break
        case (3, 3):
            #expect(
                refusals(errors) == refusals(migrate.errors), "plan: \(errors)\nmigrate: \(migrate.errors)",
                sourceLocation: sourceLocation)
        default:
            Issue.record(
                "plan exited \(status), migrate \(migrate.status)\nplan: \(output)\(errors)\nmigrate: \(migrate.errors)",
                sourceLocation: sourceLocation)
        }
    }
}
