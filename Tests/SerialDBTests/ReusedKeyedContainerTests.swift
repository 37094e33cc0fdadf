import SerialDB
import SerialDBTestSupport
import Testing

/// A fetch of `Decodable` records keeps the keyed container of its first row for the next ones:
/// a record that asks for containers of several key types gets the right one each time, and
/// every row reads its own values through the kept container.
@Suite struct ReusedKeyedContainerTests {
    /// Reads `name` through one key type and `score` through another, on every row.
    struct TwoKeyTypes: Decodable, Equatable {
        var name: String
        var score: Int

        enum NameKeys: String, CodingKey { case name }
        enum ScoreKeys: String, CodingKey { case score }

        init(name: String, score: Int) {
            self.name = name
            self.score = score
        }

        init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: NameKeys.self).decode(String.self, forKey: .name)
            score = try decoder.container(keyedBy: ScoreKeys.self).decode(Int.self, forKey: .score)
        }
    }

    struct Player: Decodable, Equatable {
        var name: String
        var score: Int
    }

    static func seed(_ db: Database) throws {
        try db.execute(sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL)")
        for (name, score) in [("ann", 10), ("bob", 20), ("cy", 30)] {
            try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: [name, score])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRecordAskingForTwoKeyTypesGetsTheContainerOfEachRowAfterRow(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let records = try queue.inDatabase { db in
            try Self.seed(db)
            return try db.fetchAll(TwoKeyTypes.self, sql: "SELECT name, score FROM player ORDER BY id")
        }
        #expect(
            records == [
                TwoKeyTypes(name: "ann", score: 10), TwoKeyTypes(name: "bob", score: 20),
                TwoKeyTypes(name: "cy", score: 30),
            ])
    }

    @Test(arguments: DatabaseKind.allCases)
    func everyRowReadsItsOwnValuesThroughTheKeptContainer(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let (first, again) = try queue.inDatabase { db in
            try Self.seed(db)
            let sql = "SELECT score, name FROM player ORDER BY id DESC"
            return (try db.fetchAll(Player.self, sql: sql), try db.fetchAll(Player.self, sql: sql))
        }
        let expected = [Player(name: "cy", score: 30), Player(name: "bob", score: 20), Player(name: "ann", score: 10)]
        #expect(first == expected)
        #expect(again == expected)
    }
}
