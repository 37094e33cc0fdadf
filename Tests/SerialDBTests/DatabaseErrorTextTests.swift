import SerialDB
import Testing

/// What a `DatabaseError` says: the primary code as documented, and the SQL of the statement
/// that failed as written, without the `;` that ends it in a script.
@Suite struct DatabaseErrorTextTests {
    @Test func theDescriptionShowsThePrimaryCodeAndTheExtendedCodeStaysAProperty() throws {
        let db = try Database(path: ":memory:")
        try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY)")
        try db.execute(sql: "INSERT INTO player(id) VALUES (1)")
        let error = #expect(throws: DatabaseError.self) { try db.execute(sql: "INSERT INTO player(id) VALUES (1)") }
        #expect(
            error?.description
                == "SQLite error 19 (constraint failed): UNIQUE constraint failed: player.id - while executing "
                + "`INSERT INTO player(id) VALUES (1)`")
        #expect(error?.resultCode == .SQLITE_CONSTRAINT)
        #expect(error?.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY)
    }

    @Test func theSQLOfAStatementInsideAScriptHasNoTrailingSemicolon() throws {
        let db = try Database(path: ":memory:")
        let error = #expect(throws: DatabaseError.self) {
            try db.execute(
                sql: """
                    CREATE TABLE player(id INTEGER PRIMARY KEY);
                    INSERT INTO player(id) VALUES (1);
                    INSERT INTO player(id) VALUES (1);
                    INSERT INTO player(id) VALUES (2);
                    """)
        }
        #expect(error?.sql == "INSERT INTO player(id) VALUES (1)")
        let last = #expect(throws: DatabaseError.self) {
            try db.execute(sql: "INSERT INTO player(id) VALUES (2); INSERT INTO player(id) VALUES (1)")
        }
        #expect(last?.sql == "INSERT INTO player(id) VALUES (1)")
    }
}
