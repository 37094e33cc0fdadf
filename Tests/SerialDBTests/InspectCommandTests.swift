import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// `serialdb inspect` on real files.
@Suite struct InspectCommandTests {
    @Test func aCompositePrimaryKeyIsShownAsOneKeyInKeyOrder() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("keys.sqlite")
        try await DatabaseQueue(path: path).write { db in
            try db.execute(
                sql: """
                    CREATE TABLE membership(team TEXT NOT NULL, member TEXT NOT NULL, role TEXT,
                        PRIMARY KEY (member, team));
                    INSERT INTO membership VALUES ('red', 'ann', 'captain');
                    CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                    """)
        }
        let run = try await ToolRun("serialdb", ["inspect", path])
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(lines.contains("  team TEXT NOT NULL"))
        #expect(lines.contains("  member TEXT NOT NULL"))
        #expect(lines.contains("  PRIMARY KEY (member, team)"))
        #expect(lines.filter { $0.contains("PRIMARY KEY") }.count == 2, "\(run.output)")
        #expect(lines.contains("  id INTEGER PRIMARY KEY (rowid)"))
    }
}
