import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

@Suite struct DatabaseFunctionTests {
    private static let slug = DatabaseFunction("slug", argumentCount: 1, deterministic: true) { arguments in
        guard case .text(let text) = arguments[0] else { return nil }
        return text.lowercased().replacingOccurrences(of: " ", with: "-")
    }

    private static let caseless = DatabaseCollation("caseless") { a, b in a.compare(b, options: .caseInsensitive) }

    private func configuration() -> Configuration {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.add(function: Self.slug)
            try db.add(collation: Self.caseless)
        }
        return configuration
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSwiftFunctionIsCallableFromSQLOnEveryRowAndInAnIndex(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE post(id INTEGER PRIMARY KEY, title TEXT)")
            for title in ["Hello World", "Grüße aus Köln", "", "A  B"] {
                try db.execute(sql: "INSERT INTO post(title) VALUES (?)", arguments: [title])
            }
            try db.execute(sql: "INSERT INTO post(title) VALUES (NULL)")
            // Only a deterministic function may appear in an index expression.
            try db.execute(sql: "CREATE UNIQUE INDEX post_slug ON post(slug(title))")
        }
        let slugs = try queue.read { db in
            try db.fetchAll(String?.self, sql: "SELECT slug(title) FROM post ORDER BY id")
        }
        #expect(slugs == ["hello-world", "grüße-aus-köln", "", "a--b", nil])
        let duplicate = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO post(title) VALUES ('HELLO world')") }
        }
        #expect(duplicate?.resultCode == .SQLITE_CONSTRAINT)
    }

    @Test func everyStorageClassTravelsThroughAFunctionUnchanged() throws {
        let identity = DatabaseFunction("identity", argumentCount: 1) { arguments in arguments[0] }
        let queue = try DatabaseQueue()
        let values: [DatabaseValue] = [
            .null, .integer(Int64.min), .integer(42), .real(-0.5), .text(""), .text("naïve ☕"),
            .blob(Data()), .blob(Data([0, 1, 255])),
        ]
        try queue.inDatabase { db in
            try db.add(function: identity)
            for value in values {
                let row = try db.fetchOne(
                    Row.self, sql: "SELECT identity(?), typeof(identity(?))", arguments: [value, value])
                #expect(try row?.decode(DatabaseValue.self, at: 0) == value)
                #expect(try row?.decode(String.self, at: 1) == value.storageClassName.lowercased())
            }
        }
    }

    @Test func anErrorThrownInsideAFunctionFailsTheStatementWithItsMessage() throws {
        struct NotAnEmail: Error, CustomStringConvertible {
            var description: String { "not an e-mail address" }
        }
        let checkEmail = DatabaseFunction("check_email", argumentCount: 1) { arguments in
            guard case .text(let text) = arguments[0], text.contains("@") else { throw NotAnEmail() }
            return 1
        }
        let queue = try DatabaseQueue()
        try queue.inDatabase { db in
            try db.add(function: checkEmail)
            try db.execute(sql: "CREATE TABLE user(email TEXT CHECK (check_email(email)))")
            try db.execute(sql: "INSERT INTO user VALUES ('ann@example.com')")
            let error = #expect(throws: DatabaseError.self) {
                try db.execute(sql: "INSERT INTO user VALUES ('bob')")
            }
            #expect(error?.message.contains("not an e-mail address") == true)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM user") == 1)
        }
    }

    @Test func aFunctionWithAnyArgumentCountSeesThemAll() throws {
        let count = DatabaseFunction("argument_count") { arguments in arguments.count }
        let queue = try DatabaseQueue()
        let counts = try queue.inDatabase { db in
            try db.add(function: count)
            return try [
                db.fetchOne(Int.self, sql: "SELECT argument_count()"),
                db.fetchOne(Int.self, sql: "SELECT argument_count(1, 'a', NULL, x'00')"),
            ]
        }
        #expect(counts == [0, 4])
    }

    @Test func anArgumentCountSQLiteCannotTakeIsRefusedClearly() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in
                try db.add(function: DatabaseFunction("too_many", argumentCount: 128) { _ in nil })
            }
        }
        #expect(error?.code == .invalidArguments)
        #expect(error?.message.contains("0 to 127") == true)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aSwiftCollationOrdersQueriesAndIndexes(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory, configuration: configuration())
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE tag(name TEXT COLLATE caseless UNIQUE)")
            for name in ["banana", "Apple", "cherry"] {
                try db.execute(sql: "INSERT INTO tag VALUES (?)", arguments: [name])
            }
        }
        #expect(
            try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM tag ORDER BY name") } == [
                "Apple", "banana", "cherry",
            ])
        let duplicate = #expect(throws: DatabaseError.self) {
            try queue.write { db in try db.execute(sql: "INSERT INTO tag VALUES ('APPLE')") }
        }
        #expect(duplicate?.resultCode == .SQLITE_CONSTRAINT)
    }

    @Test func aFileUsingTheCollationIsReadableByANewQueueSetUpTheSameWay() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tags.sqlite")
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration())
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE tag(name TEXT COLLATE caseless PRIMARY KEY)")
                try db.execute(sql: "INSERT INTO tag VALUES ('b'), ('A')")
            }
            try queue.close()
        }
        let reopened = try DatabaseQueue(path: path, configuration: configuration())
        #expect(
            try reopened.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM tag ORDER BY name") } == [
                "A", "b",
            ])
        let plain = try DatabaseQueue(path: path)
        let missing = #expect(throws: DatabaseError.self) {
            try plain.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM tag ORDER BY name") }
        }
        #expect(missing?.message.contains("caseless") == true)
    }
}
