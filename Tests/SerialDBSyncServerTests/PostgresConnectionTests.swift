import Foundation
import Testing

@testable import SerialDBSyncServer

/// What every session of the PostgreSQL store is set up with.
@Suite(.timeLimit(.minutes(2))) struct PostgresConnectionTests {
    @Test("a session plans the store's prepared statements once (generic plans), not at every execution")
    func sessionsUseGenericPlans() throws {
        let connection = try PostgresConnection(url: try TestPostgres.makeDatabase())
        #expect(try connection.execute("SHOW plan_cache_mode").string(0, 0) == "force_generic_plan")
        // A statement run more times than PostgreSQL's five custom plans keeps the generic one.
        let statement = PostgresStatement(name: "probe", sql: "SELECT count(*) FROM pg_class WHERE oid > $1::oid")
        for _ in 0..<7 { try connection.run(statement, ["0"]) }
        let plan = try connection.execute("EXPLAIN EXECUTE probe('0')")
        let text = (0..<plan.count).compactMap { plan.string($0, 0) }.joined(separator: "\n")
        #expect(text.contains("$1"), "a generic plan names its parameter:\n\(text)")
    }
}
