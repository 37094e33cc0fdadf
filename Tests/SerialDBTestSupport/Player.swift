import SerialDB

/// The test record: a player with a name and a score.
public struct Player: RowDecodable, Decodable, Equatable, Sendable {
    public var id: Int64
    public var name: String
    public var score: Int

    public init(id: Int64, name: String, score: Int) {
        self.id = id
        self.name = name
        self.score = score
    }

    public init(row: Row) throws {
        id = try row.decode(column: "id")
        name = try row.decode(column: "name")
        score = try row.decode(column: "score")
    }

    /// Creates the player table and inserts `count` players named "player-i" with score i.
    public static func createTable(_ db: Database, rows count: Int = 0) throws {
        try db.execute(
            sql: "CREATE TABLE player(id INTEGER PRIMARY KEY, name TEXT NOT NULL, score INTEGER NOT NULL DEFAULT 0)")
        let insert = try db.cachedStatement(sql: "INSERT INTO player(id, name, score) VALUES (?, ?, ?)")
        for index in 0..<count {
            try insert.execute(arguments: [index + 1, "player-\(index + 1)", index + 1])
        }
    }
}
