import CLibPQ

/// The rows of one statement's result, in libpq's text format, freed (`PQclear`) on deinit.
/// Used by the thread that ran the statement only.
final class PostgresResult {
    private let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// The number of rows.
    var count: Int { Int(PQntuples(handle)) }

    /// The rows an INSERT, UPDATE or DELETE changed (`PQcmdTuples`).
    var changedRows: Int {
        guard let text = PQcmdTuples(handle) else { return 0 }
        return Int(String(cString: text)) ?? 0
    }

    /// The text of a value, `nil` for NULL.
    func string(_ row: Int, _ column: Int) -> String? {
        let (row, column) = (Int32(row), Int32(column))
        guard PQgetisnull(handle, row, column) == 0, let value = PQgetvalue(handle, row, column) else { return nil }
        let length = Int(PQgetlength(handle, row, column))
        return value.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
    }

    /// A BIGINT (or INTEGER) value, `nil` for NULL.
    func int64(_ row: Int, _ column: Int) throws -> Int64? {
        guard let text = string(row, column) else { return nil }
        guard let value = Int64(text) else {
            throw PostgresError("expected a whole number in column \(column + 1), got \(text.prefix(40))")
        }
        return value
    }

    /// A BOOLEAN value (`t` or `f` in the text format), `nil` for NULL.
    func bool(_ row: Int, _ column: Int) -> Bool? {
        string(row, column).map { $0 == "t" }
    }
}
