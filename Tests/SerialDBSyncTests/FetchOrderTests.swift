import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@testable import SerialDBSync

/// Tables are fetched parents first: each page is committed on its own and its foreign keys
/// are checked at that COMMIT, so a child table fetched before its parent fails on a device
/// that has neither.
@Suite("The order tables are fetched in", .timeLimit(.minutes(2)))
struct FetchOrderTests {
    @Test("a child table the server lists before its parent is fetched after it, over several pages")
    func aChildTableListedFirstIsFetchedAfterItsParent() async throws {
        let zone = InProcessSyncServer.Table(
            name: "Zöne", schema: "CREATE TABLE \"Zöne\"(id TEXT PRIMARY KEY NOT NULL, name TEXT)")
        // Referenced in another ASCII case than declared: SQLite folds ASCII letters only.
        let apple = InProcessSyncServer.Table(
            name: "apple",
            schema:
                "CREATE TABLE apple(id INTEGER PRIMARY KEY, zone_id TEXT NOT NULL REFERENCES \"zöNE\"(id) ON DELETE CASCADE)"
        )
        let directory = try TemporaryDirectory()
        let server = try InProcessSyncServer(tables: [apple, zone])
        let phone = try Device(.file, in: directory, name: "phone", server: server, pageSize: 100)
        let laptop = try Device(.file, in: directory, name: "laptop", server: server, pageSize: 100)
        _ = try await phone.client.sync()
        try await phone.queue.write { db in
            for z in 1...3 {
                try db.execute(sql: "INSERT INTO \"Zöne\" VALUES (?, ?)", arguments: ["z\(z)", "zone \(z)"])
            }
            for a in 1...250 {
                try db.execute(sql: "INSERT INTO apple VALUES (?, ?)", arguments: [a, "z\(a % 3 + 1)"])
            }
        }
        #expect(try await phone.client.sync().uploaded == 253)
        let report = try await laptop.client.sync()
        #expect(report.downloaded == 253)
        let counts = try await laptop.queue.read { db in
            [
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM apple") ?? -1,
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM \"Zöne\"") ?? -1,
                try db.fetchOne(Int.self, sql: "SELECT count(*) FROM pragma_foreign_key_check") ?? -1,
            ]
        }
        #expect(counts == [250, 3, 0])
        // And a downloaded delete of a parent cascades on the laptop as on the phone.
        try phone.execute("DELETE FROM \"Zöne\" WHERE id = 'z1'")
        _ = try await phone.client.sync()
        _ = try await laptop.client.sync()
        let left = try await laptop.queue.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM apple") }
        #expect(left == 167)
    }

    /// Each table's definition in a scratch database, then the order of `tables`.
    private func order(_ schema: String, _ tables: [String]) throws -> [String] {
        let queue = try DatabaseQueue()
        return try queue.write { db in
            try db.execute(sql: schema)
            return try FetchOrder.parentsFirst(db, tables)
        }
    }

    @Test("parents come first; ties, cycles and self-references keep the server's order")
    func parentsFirstKeepsTheServersOrderOtherwise() throws {
        let chain = """
            CREATE TABLE a(id INTEGER PRIMARY KEY);
            CREATE TABLE b(id INTEGER PRIMARY KEY, a_id REFERENCES a(id));
            CREATE TABLE c(id INTEGER PRIMARY KEY, b_id REFERENCES b(id), a_id REFERENCES A(id));
            CREATE TABLE lone(id INTEGER PRIMARY KEY);
            """
        #expect(try order(chain, ["c", "lone", "b", "a"]) == ["lone", "a", "b", "c"])
        #expect(try order(chain, ["a", "b", "c"]) == ["a", "b", "c"])
        let cycle = """
            CREATE TABLE x(id INTEGER PRIMARY KEY, y_id REFERENCES y(id));
            CREATE TABLE y(id INTEGER PRIMARY KEY, x_id REFERENCES x(id));
            CREATE TABLE z(id INTEGER PRIMARY KEY, x_id REFERENCES x(id));
            CREATE TABLE tree(id INTEGER PRIMARY KEY, parent REFERENCES tree(id));
            """
        // `tree` waits for nothing; of the cycle, `y` comes first in the server's order; `z`
        // is no member of it and waits for `x`.
        #expect(try order(cycle, ["z", "y", "x", "tree"]) == ["tree", "y", "x", "z"])
        // Two tables SQLite tells apart although Swift would fold them together.
        let unicode = """
            CREATE TABLE "Ä"(id INTEGER PRIMARY KEY, p REFERENCES "ä"(id));
            CREATE TABLE "ä"(id INTEGER PRIMARY KEY);
            """
        #expect(try order(unicode, ["Ä", "ä"]) == ["ä", "Ä"])
        // A reference to a table that is not synced (local, or not served) orders nothing.
        let local = """
            CREATE TABLE local_only(id INTEGER PRIMARY KEY);
            CREATE TABLE s(id INTEGER PRIMARY KEY, l REFERENCES local_only(id), t REFERENCES t(id));
            CREATE TABLE t(id INTEGER PRIMARY KEY);
            """
        #expect(try order(local, ["s", "t"]) == ["t", "s"])
        #expect(try order(local, ["s"]) == ["s"])
        #expect(try order(local, []) == [])
    }
}
