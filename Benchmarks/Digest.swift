/// What one run of a workload produced, reduced to a few numbers that a correct run of either
/// side must reproduce exactly. A side that skips work or writes the wrong values cannot match.
///
/// Row `i` of table `t` is valid when it holds `a = i`, `b = "row-i"`, `c = i * 0.5`.
struct Digest: Equatable, CustomStringConvertible {
    /// Rows in the table, or rows fetched.
    var rows: Int64 = 0
    /// Rows holding exactly the values of their id.
    var validRows: Int64 = 0
    /// The sum of the ids, so that the right number of valid rows with wrong ids fails too.
    var idSum: Int64 = 0
    /// Operations completed (transactions, statements or round trips, per workload).
    var operations = 0

    /// The digest of a table (or fetch) holding rows `1...rows`, after `operations` operations.
    static func rows(_ rows: Int, operations: Int) -> Digest {
        let count = Int64(rows)
        return Digest(rows: count, validRows: count, idSum: count * (count + 1) / 2, operations: operations)
    }

    /// Counts one fetched row.
    mutating func add(id: Int64, a: Int64, b: String, c: Double) {
        rows += 1
        idSum &+= id
        if a == id && c == Double(id) * 0.5 && b == "row-\(id)" {
            validRows += 1
        }
    }

    var description: String {
        "rows \(rows), valid \(validRows), id sum \(idSum), operations \(operations)"
    }
}
