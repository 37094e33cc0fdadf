import SerialDB
import SerialDBTestSupport
import Testing

/// `Statement.forEachRow`: a kept or cached statement's rows read in place, the statement reset
/// after every run, however it ends.
@Suite("A statement's rows, one at a time")
struct StatementCursorTests {
    private func queueWithPlayers(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, team TEXT)")
            for (id, name, team) in [(1, "Ann", "red"), (2, "Bob", "blue"), (3, "Cé\u{0}cile", "red"), (4, "Dan", nil)]
            {
                try db.execute(
                    sql: "INSERT INTO player(id, name, team) VALUES (?, ?, ?)", arguments: [id, name, team])
            }
        }
        return queue
    }

    @Test("a cached statement reads every row of each run, with the run's arguments", arguments: DatabaseKind.allCases)
    func cachedStatementReadsEachRun(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try queueWithPlayers(kind, in: directory)
        try queue.read { db in
            let byTeam = try db.cachedStatement(sql: "SELECT name, id FROM player WHERE team IS ? ORDER BY id")
            for (team, expected) in [("red", ["Ann", "Cé\u{0}cile"]), ("blue", ["Bob"]), (nil, ["Dan"])] {
                var names: [String] = []
                try byTeam.forEachRow(arguments: [team]) { row in
                    names.append(try row.decode(at: 0))
                    #expect(row.count == 2)
                }
                #expect(names == expected)
            }
            // The same statement, fetched by the cache again, runs again from its first row.
            #expect(
                try db.fetchAll(
                    String.self, sql: "SELECT name, id FROM player WHERE team IS ? ORDER BY id", arguments: ["red"])
                    == ["Ann", "Cé\u{0}cile"])
        }
    }

    @Test("a run stopped by a throw leaves the statement reset: no read transaction stays open")
    func throwingStopsAndResets() throws {
        let directory = try TemporaryDirectory()
        let queue = try queueWithPlayers(.file, in: directory)
        struct Stop: Error {}
        try queue.inDatabase { db in
            let all = try db.makeStatement(sql: "SELECT id FROM player ORDER BY id")
            var seen: [Int] = []
            #expect(throws: Stop.self) {
                try all.forEachRow { row in
                    seen.append(try row.decode(at: 0))
                    if seen.count == 2 { throw Stop() }
                }
            }
            #expect(seen == [1, 2])
            // A statement left stepping would hold the read transaction open in autocommit.
            #expect(!db.isInsideTransaction)
            var again: [Int] = []
            try all.forEachRow { row in again.append(try row.decode(at: 0)) }
            #expect(again == [1, 2, 3, 4])
        }
    }

    @Test("the body may run other statements, and write, while the cursor reads")
    func bodyRunsOtherStatements() throws {
        let directory = try TemporaryDirectory()
        let queue = try queueWithPlayers(.file, in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE roster(name TEXT NOT NULL)")
            try db.cachedStatement(sql: "SELECT name FROM player WHERE team = 'red' ORDER BY id").forEachRow { row in
                let name: String = try row.decode(at: 0)
                try db.execute(sql: "INSERT INTO roster(name) VALUES (?)", arguments: [name])
            }
        }
        #expect(
            try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM roster") } == [
                "Ann", "Cé\u{0}cile",
            ])
    }

    @Test("arguments that do not match the parameters are refused before any row")
    func wrongArgumentsAreRefused() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            let statement = try db.makeStatement(sql: "SELECT ?")
            var rows = 0
            let error = #expect(throws: SerialDBError.self) {
                try statement.forEachRow(arguments: [1, 2]) { _ in rows += 1 }
            }
            #expect(error?.code == .invalidArguments)
            #expect(rows == 0)
        }
    }
}
