/// What ``DatabaseQueue`` and ``DatabasePool`` share for reading: write code once against
/// `some DatabaseReader` (or a generic `R: DatabaseReader`) and give it either.
///
/// ```swift
/// func playerCount(in reader: some DatabaseReader) throws -> Int {
///     try reader.read { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") } ?? 0
/// }
/// ```
///
/// The requirements are the methods of the two types, with their call-site parameters
/// (`file`, `line`, `function`, reported by slow-block reports) spelled out; this protocol's
/// extension adds the same methods with those parameters defaulted, so a generic caller writes
/// `reader.read { db in … }` as it would on a queue. Calls on a concrete queue or pool go
/// straight to that type's own method.
///
/// Only SerialDB's types conform: a conforming type must provide
/// ``DatabaseWriter/writerInternals``, which only the library can make.
public protocol DatabaseReader: AnyObject, Sendable {
    /// The database file path, or `":memory:"`.
    var path: String { get }
    /// The configuration the connections were opened with.
    var configuration: Configuration { get }

    /// Runs `block` in a read-only deferred transaction (one consistent snapshot) and returns
    /// its result. See `DatabaseQueue.read(_:)`.
    func read<T>(
        file: StaticString, line: UInt, function: StaticString, _ block: (Database) throws -> T
    ) throws -> T

    /// Async twin of ``read(file:line:function:_:)``.
    func read<T: Sendable>(
        file: StaticString, line: UInt, function: StaticString, _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T

    /// Makes the statements running now fail with `SQLITE_INTERRUPT`. Safe from any thread.
    func interrupt()

    /// Waits for the work already submitted, then closes the connections.
    func close() throws

    /// Async twin of ``close()``.
    func close() async throws

    /// Blocks run and their wait and run time percentiles; `nil` unless
    /// ``Configuration/recordsStatistics`` is set.
    func statistics() -> QueueStatistics?
}

extension DatabaseReader {
    /// ``read(file:line:function:_:)`` with the caller's position filled in.
    public func read<T>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: (Database) throws -> T
    ) throws -> T {
        try read(file: file, line: line, function: function, block)
    }

    /// Async ``read(file:line:function:_:)`` with the caller's position filled in.
    public func read<T: Sendable>(
        file: StaticString = #fileID, line: UInt = #line, function: StaticString = #function,
        _ block: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await read(file: file, line: line, function: function, block)
    }
}
