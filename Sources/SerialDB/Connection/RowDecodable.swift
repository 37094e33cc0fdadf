/// A type built from a row by hand: the fastest way to fetch records.
///
/// ```swift
/// struct Player: RowDecodable {
///     var id: Int64, name: String, score: Int
///     init(row: Row) throws {
///         id = try row.decode(at: 0)
///         name = try row.decode(column: "name")
///         score = try row.decode(column: "score")
///     }
/// }
/// let players = try db.fetchAll(Player.self, sql: "SELECT id, name, score FROM player")
/// ```
///
/// Types that are `Decodable` can be fetched without writing this initializer, at some cost.
public protocol RowDecodable {
    /// Builds a value from the current row. The row is only valid during the call.
    init(row: Row) throws
}
