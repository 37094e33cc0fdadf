import SerialDB

/// The order a sync fetches its tables in: each table after the synced tables its foreign keys
/// reference, so that the rows of a child table find their parents already written. A page is
/// committed on its own, and its foreign keys are checked at that COMMIT: a child table fetched
/// before its parent would fail its first page on a device that has neither, at every sync.
///
/// Names are compared as SQLite compares them (`sqliteFolded`: ASCII letters only fold).
/// Otherwise the server's order is kept. Tables that reference each other in a cycle cannot
/// all come after their parents: the first of them in the server's order goes first. A table
/// that references itself is not held back by itself (its rows come in version order, which
/// puts parents first only when they were written first).
enum FetchOrder {
    /// `tables` (the server's order), parents before the tables that reference them, as the
    /// local definitions' foreign keys say.
    static func parentsFirst(_ db: Database, _ tables: [String]) throws -> [String] {
        let synced = Set(tables.map(\.sqliteFolded))
        var parents: [String: Set<String>] = [:]
        for table in tables {
            let referenced = try db.fetchAll(
                String.self, sql: "SELECT DISTINCT \"table\" FROM pragma_foreign_key_list(?)", arguments: [table])
            parents[table.sqliteFolded] = Set(referenced.map(\.sqliteFolded)).intersection(synced)
                .subtracting([table.sqliteFolded])
        }
        var ordered: [String] = []
        var remaining = tables
        while !remaining.isEmpty {
            let left = Set(remaining.map(\.sqliteFolded))
            func isReady(_ table: String) -> Bool { parents[table.sqliteFolded, default: []].isDisjoint(with: left) }
            let index =
                remaining.firstIndex(where: isReady)
                ?? remaining.firstIndex { isInCycle($0.sqliteFolded, parents: parents, among: left) } ?? 0
            ordered.append(remaining.remove(at: index))
        }
        return ordered
    }

    /// Whether `table` reaches itself through the parents of tables still `among` those left.
    private static func isInCycle(_ table: String, parents: [String: Set<String>], among left: Set<String>) -> Bool {
        var seen: Set<String> = []
        var next = Array(parents[table, default: []].intersection(left))
        while let current = next.popLast() {
            if current == table { return true }
            guard seen.insert(current).inserted else { continue }
            next += parents[current, default: []].intersection(left)
        }
        return false
    }
}
