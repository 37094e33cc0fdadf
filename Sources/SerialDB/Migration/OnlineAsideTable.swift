/// The old table of a swapped-in copy, renamed aside by the swap rather than dropped under the
/// gate, then emptied in small chunks once the gate is open.
///
/// Dropping a table frees each of its pages, and with `secure_delete` (on in many SQLite
/// builds) overwrites each with zeros, which the commit then writes to the WAL: at 1,000,000
/// rows of four columns the DROP took 120 ms and the commit, whose checkpoint carried those
/// pages, 97 ms, while every other piece of work waited. Renaming costs the same at any size.
///
/// The swap renames the live table to `serialdb_old_<copy>` with `legacy_alter_table` on, so
/// that views, triggers and other tables' foreign keys keep naming the table, which the copy
/// becomes a moment later. Before that it drops the table's own triggers (the plan creates
/// them again on the new table); after it, it renames the table's indexes and removes the
/// table's foreign keys from its definition (`writable_schema`), so that the rows set aside
/// never answer for a parent's delete. Nothing else of the definition changes: the columns,
/// their types and collations, the key and the options stay, and so does the table's layout on
/// disk. Where the schema cannot be written (`SQLITE_DBCONFIG_DEFENSIVE`) the swap drops the
/// table as before.
///
/// A table set aside holds no row anyone reads. After the upgrade, the queue or pool deletes
/// its rows in chunks, each its own short transaction, resting between them like the copy,
/// then drops it; a crash meanwhile leaves it for the next open of the file to drop.
/// See <https://www.sqlite.org/lang_altertable.html#alter_table_rename> and
/// <https://www.sqlite.org/pragma.html#pragma_secure_delete>.
enum OnlineAsideTable {
    /// Rows deleted per chunk after the gate opens.
    static let rowsPerChunk = 2_000

    /// The name the old table of copy `id` is set aside under.
    static func name(for id: Int64) -> String { "serialdb_old_\(id)" }

    /// Tables set aside and not dropped yet.
    static func tables(_ db: Database) throws -> [String] {
        try db.fetchAll(
            String.self,
            sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'serialdb\\_old\\_%' ESCAPE '\\' "
                + "ORDER BY name")
    }

    // MARK: - Setting a table aside

    /// Renames `table` to `aside`, in the caller's transaction (foreign keys off), as described
    /// above. Returns false, having changed nothing, when the schema cannot be written or the
    /// table's definition would not survive the rewrite: then the caller drops the table.
    static func setAside(_ table: String, as aside: String, _ db: Database) throws -> Bool {
        var done = false
        try db.inSavepoint { db in
            done = try rename(table, to: aside, db)
            return done ? .commit : .rollback
        }
        return done
    }

    private static func rename(_ table: String, to aside: String, _ db: Database) throws -> Bool {
        let objects = try db.fetchAll(
            Row.self, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE type IN ('index', 'trigger')")
        let own = try objects.filter { row in try (row.decode(String.self, at: 2)).isSameSQLiteName(as: table) }
        for row in own where try row.decode(String.self, at: 0) == "trigger" {
            try db.execute(sql: "DROP TRIGGER \(try row.decode(String.self, at: 1).quotedDatabaseIdentifier)")
        }
        let columns = try columnDescriptions(of: table, db)
        let legacy = try db.fetchOne(Bool.self, sql: "PRAGMA legacy_alter_table") ?? false
        try db.execute(sql: "PRAGMA legacy_alter_table = ON")
        defer { try? db.execute(sql: "PRAGMA legacy_alter_table = \(legacy ? "ON" : "OFF")") }
        try db.execute(
            sql: "ALTER TABLE \(table.quotedDatabaseIdentifier) RENAME TO \(aside.quotedDatabaseIdentifier)")
        // Autoindexes (UNIQUE, PRIMARY KEY) took the new table name with the rename; named ones
        // did not, and the new table's indexes take those names.
        var renames: [(name: String, sql: String, from: String)] = []
        for (position, row) in own.enumerated() where try row.decode(String.self, at: 0) == "index" {
            let name: String = try row.decode(at: 1)
            guard let sql = try row.decode(String?.self, at: 3) else { continue }
            let newName = "\(aside)_index_\(position + 1)"
            guard let renamed = OnlineTableCopy.indexSQL(sql, named: newName, on: aside) else { return false }
            renames.append((newName, renamed, name))
        }
        let definition = try db.fetchOne(
            String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [aside])
        guard let definition else { return false }
        let stripped = withoutForeignKeys(definition)
        do {
            try db.execute(sql: "PRAGMA writable_schema = ON")
            for rename in renames {
                try db.execute(
                    sql: "UPDATE sqlite_master SET name = ?, sql = ? WHERE type = 'index' AND name = ?",
                    arguments: [rename.name, rename.sql, rename.from])
            }
            if stripped != definition {
                try db.execute(
                    sql: "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = ?",
                    arguments: [stripped, aside])
            }
            try db.execute(sql: "PRAGMA writable_schema = RESET")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_ERROR {
            try? db.execute(sql: "PRAGMA writable_schema = RESET")
            return false
        }
        // The rewrite may only have removed foreign keys: the same columns, types, defaults and key.
        let foreignKeys = try db.fetchOne(
            Int.self, sql: "SELECT count(*) FROM pragma_foreign_key_list(?)", arguments: [aside])
        let after = try columnDescriptions(of: aside, db)
        return foreignKeys == 0 && after == columns
    }

    private static func columnDescriptions(of table: String, _ db: Database) throws -> [String] {
        try db.fetchAll(
            String.self,
            sql: "SELECT cid || '|' || name || '|' || type || '|' || \"notnull\" || '|' || ifnull(dflt_value, '') "
                + "|| '|' || pk || '|' || hidden FROM pragma_table_xinfo(?) ORDER BY cid", arguments: [table])
    }

    /// `CREATE TABLE` without its foreign keys: table constraints `[CONSTRAINT name] FOREIGN KEY
    /// (...) REFERENCES ...` and column constraints `REFERENCES ...` with their actions and
    /// deferral. (A `CONSTRAINT name` left with nothing after it is valid SQLite.)
    /// See <https://www.sqlite.org/syntax/foreign-key-clause.html>.
    static func withoutForeignKeys(_ sql: String) -> String {
        let tokens = SQLTokenizer.tokenize(sql)
        func bare(_ index: Int, _ word: String) -> Bool {
            index < tokens.count && tokens[index].isWord(word) && sql[tokens[index].range].first?.isLetter == true
        }
        var cuts: [Range<String.Index>] = []
        var index = 0
        var depth = 0
        var itemStart: Int?
        while index < tokens.count {
            let token = tokens[index]
            if token.isSymbol("(") {
                depth += 1
                if depth == 1 { itemStart = index + 1 }
            } else if token.isSymbol(")") {
                depth -= 1
            } else if token.isSymbol(","), depth == 1 {
                itemStart = index + 1
            } else if depth == 1, bare(index, "foreign"), let start = itemStart {
                // A table constraint: the whole item, with the comma before it.
                var end = index
                var level = 0
                while end < tokens.count {
                    if tokens[end].isSymbol("(") { level += 1 }
                    if tokens[end].isSymbol(")") {
                        if level == 0 { break }
                        level -= 1
                    }
                    if tokens[end].isSymbol(","), level == 0 { break }
                    end += 1
                }
                let from = start > 0 && tokens[start - 1].isSymbol(",") ? start - 1 : start
                cuts.append(tokens[from].range.lowerBound..<tokens[end - 1].range.upperBound)
                index = end
                continue
            } else if depth == 1, bare(index, "references") {
                var end = index + 2
                if end < tokens.count, tokens[end].isSymbol("(") {
                    while end < tokens.count, !tokens[end].isSymbol(")") { end += 1 }
                    end += 1
                }
                while end < tokens.count {
                    if bare(end, "on") {
                        end += bare(end + 2, "set") || bare(end + 2, "no") ? 4 : 3
                    } else if bare(end, "match") || bare(end, "initially") {
                        end += 2
                    } else if bare(end, "not") && bare(end + 1, "deferrable") {
                        end += 2
                    } else if bare(end, "deferrable") {
                        end += 1
                    } else {
                        break
                    }
                }
                cuts.append(token.range.lowerBound..<tokens[min(end, tokens.count) - 1].range.upperBound)
                index = end
                continue
            }
            index += 1
        }
        var result = sql
        for cut in cuts.reversed() { result.removeSubrange(cut) }
        return result
    }

    // MARK: - Dropping

    /// Deletes up to `rows` rows of the first table set aside, in one IMMEDIATE transaction, and
    /// drops it once it is empty. Returns whether a table set aside is left.
    static func dropChunk(rows: Int, _ db: Database) throws -> Bool {
        var left = false
        try db.inTransaction(.immediate) { db in
            guard let table = try tables(db).first else { return .commit }
            let name = table.quotedDatabaseIdentifier
            var deleted = 0
            if let key = try deletionKey(of: table, db) {
                try db.execute(
                    sql: "DELETE FROM \(name) WHERE (\(key)) IN (SELECT \(key) FROM \(name) LIMIT ?)", arguments: [rows]
                )
                deleted = db.changesCount
            }
            if deleted < rows {
                try db.execute(sql: "DROP TABLE \(name)")
                left = try !tables(db).isEmpty
            } else {
                left = true
            }
            return .commit
        }
        return left
    }

    /// Drops every table set aside, in the caller's transaction.
    static func dropAll(_ db: Database) throws {
        for table in try tables(db) {
            try db.execute(sql: "DROP TABLE \(table.quotedDatabaseIdentifier)")
        }
    }

    /// The rowid, through a name no column takes (``TableDefinition/rowIDName``), else the
    /// primary key; `nil` when the table has neither (then it is dropped in one go).
    private static func deletionKey(of table: String, _ db: Database) throws -> String? {
        let isWithoutRowID =
            try db.fetchOne(
                Bool.self, sql: "SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?",
                arguments: [table]) ?? false
        let definition = TableDefinition(
            name: table, sql: "", columns: try DatabaseSchema.columns(of: table, db), foreignKeys: [],
            isWithoutRowID: isWithoutRowID, isStrict: false)
        if let rowID = definition.rowIDName { return rowID }
        let key = definition.columns.filter { $0.primaryKeyIndex > 0 }.sorted {
            $0.primaryKeyIndex < $1.primaryKeyIndex
        }
        return key.isEmpty ? nil : key.map(\.name.quotedDatabaseIdentifier).joined(separator: ", ")
    }

    /// After an upgrade that set tables aside: deletes their rows in chunks through `writer`,
    /// each chunk queued behind the work already submitted and followed by a rest twice its
    /// length, then drops them. Holds the ``OnlineCopyLease`` meanwhile, so that another
    /// process's open leaves them alone. Stops at the first failure (queue closed, another
    /// upgrade failed, the file locked by another process): the next open drops what is left.
    static func dropInBackground(_ writer: Serializer) {
        Task.detached(priority: .utility) {
            let lease = try? await writer.async { db in OnlineCopyLease.shared(for: db) }
            defer { withExtendedLifetime(lease) {} }
            let clock = ContinuousClock()
            var chunks = 0
            while true {
                let started = clock.now
                chunks += 1
                let checkpoint = chunks % OnlinePreparation.chunksPerCheckpoint == 0
                let left = try? await writer.async { db in
                    let left = try dropChunk(rows: rowsPerChunk, db)
                    if checkpoint && !db.isInMemory {
                        _ = try db.fetchAll(Row.self, sql: "PRAGMA wal_checkpoint(PASSIVE)")
                    }
                    return left
                }
                guard left == true else { return }
                try? await Task.sleep(for: (clock.now - started) * OnlinePreparation.restFactor)
            }
        }
    }
}
