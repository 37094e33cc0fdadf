extension DatabaseWriter {
    /// Observes `fetch`: the sequence gives its value now, then a fresh value after each
    /// commit through this queue or pool that changed a table it read, or the schema.
    ///
    /// ```swift
    /// let counts = pool.observe { db in try db.fetchOne(Int.self, sql: "SELECT count(*) FROM player") ?? 0 }
    /// for try await count in counts.removeDuplicates() {
    ///     print(count, "players")
    /// }
    /// ```
    ///
    /// The fetch runs in a read-only transaction: on a queue as one of its blocks, on a pool on
    /// a reader connection. Writes made by other processes (or other connections to the file)
    /// are not observed. See ``ObservedValues`` for the full contract.
    ///
    /// - Parameter fetch: reads the value; it may run many times, and must only read.
    /// - Returns: the values, to iterate with `for try await`.
    public func observe<Value: Sendable>(
        _ fetch: @escaping @Sendable (Database) throws -> Value
    ) -> ObservedValues<Value> {
        ObservedValues(
            internals: writerInternals, read: { [self] block in try await read(block) }, fetch: fetch,
            isDuplicate: nil)
    }
}
