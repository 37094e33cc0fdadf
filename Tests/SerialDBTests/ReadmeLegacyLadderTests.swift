import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// The README's example of adopting the original app's version ladder, run as written: the
/// code between the markers is the README's block, and a test checks that they are the same.
@Suite struct ReadmeLegacyLadderTests {
    private func adoptTheOriginalLadder(_ queue: DatabaseQueue) throws {
        // README legacy ladder begin
        // The app before SerialDB: t_info(version TEXT) holds the NEXT case of its fall-through switch.
        //   case 1: CREATE TABLE T_User(...)                     then version = '2.0'
        //   case 2: ALTER TABLE T_User ADD COLUMN email ...      then version = '3.0'
        //   case 3: ALTER TABLE T_User ADD COLUMN password ...   then version = '4.0'
        var ladder = DatabaseMigrator()
        ladder.registerMigration("1-create-user") { db in
            try db.execute(sql: "CREATE TABLE T_User(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        }
        ladder.registerMigration("2-add-email") { db in
            try db.execute(sql: "ALTER TABLE T_User ADD COLUMN email TEXT")
        }
        ladder.registerMigration("3-add-password") { db in
            try db.execute(sql: "ALTER TABLE T_User ADD COLUMN password TEXT NOT NULL DEFAULT '111111'")
        }
        // How many steps the database already has: '3.0' means cases 1 and 2 ran.
        ladder.adoptLegacyVersion(
            .custom { db in
                guard try db.tableExists("t_info"),
                    let version = try db.fetchOne(String.self, sql: "SELECT version FROM t_info"),
                    let next = Int(version.prefix(while: \.isNumber))
                else { return 0 }  // a fresh install: every step runs
                return next - 1
            })
        try queue.migrate(ladder)
        // README legacy ladder end
    }

    /// A file as the original app left it after cases 1 and 2, with users in it.
    private func originalAppDatabase(in directory: TemporaryDirectory, kind: DatabaseKind) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE t_info(version TEXT)")
            try db.execute(sql: "INSERT INTO t_info(version) VALUES ('3.0')")
            try db.execute(sql: "CREATE TABLE T_User(id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
            try db.execute(sql: "ALTER TABLE T_User ADD COLUMN email TEXT")
            try db.execute(sql: "INSERT INTO T_User(name, email) VALUES ('Ann', 'ann@example.org'), ('Bob', NULL)")
        }
        return queue
    }

    @Test(arguments: DatabaseKind.allCases)
    func theOriginalAppsDatabaseGetsOnlyTheMissingCase(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try originalAppDatabase(in: directory, kind: kind)
        try adoptTheOriginalLadder(queue)
        let users = try queue.read { db in
            try db.fetchAll(Row.self, sql: "SELECT name, email, password FROM T_User ORDER BY id").map {
                [try $0.decode(column: "name") as String, try $0.decode(column: "password") as String]
            }
        }
        #expect(users == [["Ann", "111111"], ["Bob", "111111"]])
        let applied = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT identifier FROM serialdb_migrations ORDER BY rowid")
        }
        #expect(applied == ["1-create-user", "2-add-email", "3-add-password"])
        // Running it again changes nothing.
        try adoptTheOriginalLadder(queue)
    }

    @Test func aFreshInstallRunsEveryCase() throws {
        let queue = try DatabaseQueue()
        try adoptTheOriginalLadder(queue)
        let columns = try queue.read { db in
            try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('T_User')")
        }
        #expect(columns == ["id", "name", "email", "password"])
    }

    @Test func theREADMEShowsExactlyThisCode() throws {
        let here = URL(fileURLWithPath: #filePath)
        let root = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let tested = Self.dedented(
            Self.lines(of: source, from: "// README legacy ladder begin", to: "// README legacy ladder end"))
        #expect(!tested.isEmpty)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map {
            $0.components(separatedBy: "```").first ?? ""
        }
        #expect(
            blocks.contains {
                Self.dedented($0.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)) == tested
            })
    }

    private static func lines(of text: String, from begin: String, to end: String) -> [String] {
        let all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let first = all.firstIndex(where: { $0.contains(begin) && !$0.contains("lines(of") }),
            let last = all.lastIndex(where: { $0.contains(end) && !$0.contains("lines(of") })
        else { return [] }
        return Array(all[(first + 1)..<last])
    }

    /// The lines without their common indentation and without blank lines at either end.
    private static func dedented(_ lines: [String]) -> [String] {
        var lines = lines
        while lines.first?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeFirst() }
        while lines.last?.trimmingCharacters(in: .whitespaces).isEmpty == true { lines.removeLast() }
        let indent =
            lines.filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            .map { $0.prefix(while: { $0 == " " }).count }.min() ?? 0
        return lines.map { String($0.dropFirst(min(indent, $0.prefix(while: { $0 == " " }).count))) }
    }
}
