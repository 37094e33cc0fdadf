import SerialDB

/// One row of `t` read by column index through ``RowDecodable``: the fast, hand-written path.
struct BenchRecord: RowDecodable {
    var id: Int64
    var a: Int64
    var b: String
    var c: Double

    init(row: Row) throws {
        // By index, as the C side reads its columns; the query names them in this order.
        id = try row.decode(at: 0)
        a = try row.decode(at: 1)
        b = try row.decode(at: 2)
        c = try row.decode(at: 3)
    }
}
