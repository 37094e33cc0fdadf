import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Schema steps that hold full-text (FTS3/4/5) and R*Tree tables: created, dropped, recreated
/// and refilled on real rows, with their shadow tables never taken for the app's own.
@Suite struct VirtualTableSchemaTests {
    /// Expects applying `schema` to be refused as a schema change (and so change nothing).
    private func expectRefused(_ queue: DatabaseQueue, _ schema: String) {
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db in _ = try db.changeSchema(to: schema) }
        }
        #expect(error?.code == .schemaChangeRefused)
    }

    /// The rowids a full-text query finds, in order.
    private func matches(_ db: Database, _ table: String, _ query: String) throws -> [Int64] {
        try db.fetchAll(
            Int64.self,
            sql: "SELECT rowid FROM \(table.quotedDatabaseIdentifier) WHERE \(table.quotedDatabaseIdentifier) MATCH ? "
                + "ORDER BY rowid", arguments: [query])
    }

    /// Fails unless the FTS index agrees with its content (FTS4 and FTS5 both know the command).
    private func checkIntegrity(_ db: Database, _ table: String) throws {
        let name = table.quotedDatabaseIdentifier
        try db.execute(sql: "INSERT INTO \(name)(\(name)) VALUES('integrity-check')")
    }

    /// An app's notes with an external-content FTS5 index kept in step by triggers, the way
    /// sqlite-utils sets one up.
    private static let notesTable = "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);"
    private static let notesIndex = """
        CREATE VIRTUAL TABLE notes_fts USING fts5(title, body, content='notes', content_rowid='id');
        CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
            INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
        CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
        END;
        CREATE TRIGGER notes_au AFTER UPDATE ON notes BEGIN
            INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
            INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
        END;
        """

    private func seededNotes(_ kind: DatabaseKind, in directory: TemporaryDirectory) throws -> DatabaseQueue {
        let queue = try kind.makeQueue(in: directory)
        try queue.write { db in
            try db.execute(sql: Self.notesTable)
            for id in 1...300 {
                try db.execute(
                    sql: "INSERT INTO notes(id, title, body) VALUES (?, ?, ?)",
                    arguments: [id * 3, "note \(id)", id % 10 == 0 ? nil : "body \(id % 7 == 0 ? "seven" : "plain")"])
            }
        }
        try queue.inDatabase { db in _ = try db.changeSchema(to: Self.notesTable + Self.notesIndex) }
        return queue
    }

    /// A change of case only, of a virtual table's name or of a column's, is a change like any
    /// other: the live schema ends with the names exactly as asked for, and keeps every row.
    @Test(arguments: DatabaseKind.allCases)
    func aChangeOfCaseOnlyRecreatesTheTableUnderTheNamesAsAsked(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let before = """
            CREATE VIRTUAL TABLE mail_search USING fts4(subject, text);
            CREATE VIRTUAL TABLE place USING rtree(id, min_x, max_x);
            """
        try queue.inDatabase { db in
            _ = try db.changeSchema(to: before)
            for id in 1...50 {
                try db.execute(
                    sql: "INSERT INTO mail_search(rowid, subject, text) VALUES (?, ?, ?)",
                    arguments: [id, "subject \(id)", id % 5 == 0 ? "ünïcode five" : "plain"])
                try db.execute(sql: "INSERT INTO place VALUES (?, ?, ?)", arguments: [id, Double(id), Double(id) + 1])
            }
        }
        let after = """
            CREATE VIRTUAL TABLE Mail_Search USING fts4(Subject, text);
            CREATE VIRTUAL TABLE PLACE USING rtree(id, min_x, max_x);
            """
        try queue.inDatabase { db in
            let plan = try db.planSchemaChange(to: after)
            #expect(!plan.isEmpty, "a change of case is not nothing to do")
            #expect(!plan.isRefused, "\(plan.refusals)")
            _ = try db.changeSchema(to: after)
            let names = try db.fetchAll(
                String.self, sql: "SELECT name FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL%' ORDER BY name")
            #expect(names == ["Mail_Search", "PLACE"])
            let columns = try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('mail_search')")
            #expect(columns == ["Subject", "text"])
            #expect(try matches(db, "Mail_Search", "five").count == 10)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM PLACE WHERE min_x >= 10") == 41)
            #expect(try db.planSchemaChange(to: after).isEmpty, "once applied, nothing is left to do")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func everyModuleIsCreatedAndTheSameSchemaWrittenDifferentlyPlansNothing(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        let extra = """
            CREATE VIRTUAL TABLE old_search USING fts3(subject, text);
            CREATE VIRTUAL TABLE mail_search USING fts4(subject, text, languageid="lid", prefix="2");
            CREATE VIRTUAL TABLE place USING rtree(id, min_x, max_x, min_y, max_y, +label);
            CREATE VIRTUAL TABLE place32 USING rtree_i32(id, a, b);
            """
        try queue.inDatabase { db throws in
            let plan = try db.changeSchema(to: Self.notesTable + Self.notesIndex + extra)
            #expect(plan.steps.map(\.summary).filter { $0.hasPrefix("create virtual table") }.count == 4)
            // The index created over existing notes is filled from them at once.
            #expect(try matches(db, "notes_fts", "seven").count == 38)
            let schema = try db.schema()
            #expect(schema.tables.map(\.name) == ["notes"], "shadow tables are the virtual tables', not the app's")
            #expect(
                schema.virtualTables.map(\.name) == ["mail_search", "notes_fts", "old_search", "place", "place32"])
        }
        // The case of keywords and module names, quoting, whitespace, comments, IF NOT EXISTS
        // and `main.` change nothing (the case of a name is a rename).
        let rewritten = """
            create table notes(id integer primary key, "title" text, [body] TEXT);
            CREATE VIRTUAL TABLE IF NOT EXISTS main.notes_fts USING FTS5 (
                title,  -- the heading
                body, content = "notes", content_rowid = id);
            CREATE TRIGGER notes_ai AFTER INSERT ON notes BEGIN
                INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
            END;
            CREATE TRIGGER notes_ad AFTER DELETE ON notes BEGIN
                INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
            END;
            CREATE TRIGGER notes_au AFTER UPDATE ON notes BEGIN
                INSERT INTO notes_fts(notes_fts, rowid, title, body) VALUES ('delete', old.id, old.title, old.body);
                INSERT INTO notes_fts(rowid, title, body) VALUES (new.id, new.title, new.body);
            END;
            create virtual table old_search using Fts3(subject, text);
            CREATE VIRTUAL TABLE mail_search USING fts4(subject,text,languageid='lid',prefix=2);
            CREATE VIRTUAL TABLE "place" USING rtree(id,min_x,max_x,min_y,max_y,+label);
            CREATE VIRTUAL TABLE place32 USING rtree_i32(id, a, b);
            """
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: rewritten) }
        #expect(plan.isEmpty, "\(plan.sql)")
        #expect(!plan.isRefused, "\(plan.refusals)")
    }

    @Test(arguments: DatabaseKind.allCases)
    func populatedShadowTablesAreNeitherPlannedNorRefusedAsTablesAbsentFromTheSchema(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let schema = """
            CREATE VIRTUAL TABLE doc USING fts5(body);
            CREATE VIRTUAL TABLE old USING fts4(body);
            CREATE VIRTUAL TABLE box USING rtree(id, x0, x1);
            CREATE TABLE kept(id INTEGER PRIMARY KEY);
            """
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: schema)
            for id in 1...50 {
                try db.execute(sql: "INSERT INTO doc(rowid, body) VALUES (?, 'word')", arguments: [id])
                try db.execute(sql: "INSERT INTO old(docid, body) VALUES (?, 'word')", arguments: [id])
                try db.execute(sql: "INSERT INTO box VALUES (?, 0, ?)", arguments: [id, id])
            }
        }
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: schema) }
        #expect(plan.isEmpty, "\(plan.sql)")
        #expect(plan.refusals.isEmpty, "\(plan.refusals)")
        // A rebuild of an ordinary table drops and recreates triggers and views, never shadow tables.
        let changed = try queue.inDatabase { db throws in
            try db.changeSchema(to: schema.replacingOccurrences(of: "kept(id INTEGER PRIMARY KEY)", with: "kept(id)"))
        }
        #expect(changed.steps.allSatisfy { !$0.statements.joined().contains("_content") }, "\(changed.sql)")
        try queue.read { db throws in
            #expect(try matches(db, "doc", "word").count == 50)
            #expect(try matches(db, "old", "word").count == 50)
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM box WHERE x1 >= 25") == 26)
        }
    }

    @Test(arguments: DatabaseKind.allCases, [("fts3", "fts4"), ("fts4", "fts5"), ("fts5", "fts5"), ("fts3", "fts5")])
    func aChangedContentfulTableIsRecreatedWithItsRowsAndRowids(kind: DatabaseKind, modules: (String, String)) throws {
        let (from, to) = modules
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE doc USING \(from)(title, body, note);")
            for id in [1, 2, 1000, 1 << 40] {
                try db.execute(
                    sql: "INSERT INTO doc(rowid, title, body, note) VALUES (?, ?, ?, ?)",
                    arguments: [id, "title \(id)", id == 2 ? "needle" : "hay", "üñí \(id)"])
            }
        }
        var options = SchemaChangeOptions()
        options.renameColumn("note", to: "remark", inTable: "doc")
        let plan = try queue.inDatabase { db throws in
            try db.changeSchema(
                to: "CREATE VIRTUAL TABLE doc USING \(to)(body, remark, title, added, prefix='2');", options: options)
        }
        #expect(plan.sql.contains("copy the 4 row(s)"), "\(plan.sql)")
        try queue.inDatabase { db throws in
            let rows = try db.fetchAll(
                Row.self, sql: "SELECT rowid, title, body, remark, added FROM doc ORDER BY rowid")
            #expect(rows.map { $0[0] } == [.integer(1), .integer(2), .integer(1000), .integer(1 << 40)])
            #expect(rows.map { $0[1] } == [1, 2, 1000, 1 << 40].map { .text("title \($0)") })
            #expect(rows.map { $0[3] } == [1, 2, 1000, 1 << 40].map { .text("üñí \($0)") })
            #expect(rows.allSatisfy { $0[4] == .null })
            #expect(try matches(db, "doc", "needle") == [2])
            #expect(try matches(db, "doc", "title") == [1, 2, 1000, 1 << 40])
            #expect(
                try db.fetchOne(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'doc'")?.contains(to)
                    == true)
            try checkIntegrity(db, "doc")
            // The temporary copy left no table and no shadow table behind.
            #expect(
                try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE name LIKE 'serialdb%'").isEmpty)
        }
        #expect(
            try queue.inDatabase { db throws in
                try db.planSchemaChange(
                    to: "CREATE VIRTUAL TABLE doc USING \(to)(body, remark, title, added, prefix='2');")
            }.isEmpty)
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableFedByATriggerIsRecreatedAndTheTriggerFeedsTheNewOne(kind: DatabaseKind) throws {
        // The trigger names the table, so SQLite's RENAME of the new definition into place
        // checks it: the plan must take such triggers away first and put them back after.
        func schema(_ module: String) -> String {
            """
            CREATE TABLE message(id INTEGER PRIMARY KEY, text TEXT);
            CREATE VIRTUAL TABLE message_search USING \(module)(text);
            CREATE TRIGGER message_indexed AFTER INSERT ON message BEGIN
                INSERT INTO message_search(rowid, text) VALUES (new.id, new.text);
            END;
            """
        }
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: schema("fts4"))
            for id in 1...40 {
                try db.execute(sql: "INSERT INTO message(id, text) VALUES (?, ?)", arguments: [id, "word\(id % 4)"])
            }
            _ = try db.changeSchema(to: schema("fts5"))
            #expect(try matches(db, "message_search", "word1").count == 10)
            try db.execute(sql: "INSERT INTO message(id, text) VALUES (100, 'word1')")
            #expect(try matches(db, "message_search", "word1").count == 11)
            try checkIntegrity(db, "message_search")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anFTS4LanguageIDTravelsWithItsRows(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE doc USING fts4(body, languageid=lang);")
            try db.execute(sql: "INSERT INTO doc(docid, body, lang) VALUES (1, 'word', 0), (2, 'word', 3)")
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE doc USING fts4(body, title, languageid=lang);")
            #expect(try db.fetchAll(Int.self, sql: "SELECT lang FROM doc ORDER BY docid") == [0, 3])
            // A language id picks which documents a query sees.
            #expect(try db.fetchAll(Int.self, sql: "SELECT docid FROM doc WHERE doc MATCH 'word' AND lang = 3") == [2])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func oddNamesSurviveARecreationAndAContentlessCheck(kind: DatabaseKind) throws {
        let name = "Notiz \"Suche\" ☕"
        let quoted = name.quotedDatabaseIdentifier
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(
                to:
                    "CREATE VIRTUAL TABLE \(quoted) USING fts5(\"Ä b\", x); CREATE VIRTUAL TABLE \"Leer\" USING fts4(t, content=\"\");"
            )
            try db.execute(sql: "INSERT INTO \(quoted)(rowid, \"Ä b\", x) VALUES (42, 'grün', 'x')")
            try db.execute(sql: "INSERT INTO \"Leer\"(docid, t) VALUES (1, 'w')")
            let refused = try db.planSchemaChange(
                to:
                    "CREATE VIRTUAL TABLE \(quoted) USING fts5(\"Ä b\", x, y); CREATE VIRTUAL TABLE leer USING fts4(t, u, content=\"\");"
            )
            #expect(refused.refusals.count == 1, "\(refused.refusals)")
            #expect(refused.refusals.first?.contains("1 indexed row(s)") == true, "\(refused.refusals)")
            _ = try db.changeSchema(
                to:
                    "CREATE VIRTUAL TABLE \(quoted) USING fts5(\"Ä b\", x, y); CREATE VIRTUAL TABLE \"Leer\" USING fts4(t, content=\"\");"
            )
            #expect(try matches(db, name, "grün") == [42])
            try checkIntegrity(db, name)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aTableAndAVirtualTableCanTradePlaces(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE TABLE search(id INTEGER PRIMARY KEY, body TEXT);")
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE search USING fts5(body);")
            try db.execute(sql: "INSERT INTO search(rowid, body) VALUES (1, 'word')")
            #expect(try matches(db, "search", "word") == [1])
            var options = SchemaChangeOptions()
            options.allowDropping(table: "search")
            _ = try db.changeSchema(to: "CREATE TABLE search(id INTEGER PRIMARY KEY, body TEXT);", options: options)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT type || ' ' || sql FROM sqlite_master")
                    == "table CREATE TABLE search(id INTEGER PRIMARY KEY, body TEXT)")
        }
    }

    @Test func aLiveVirtualTableOfAnotherModuleIsLeftAloneButNotReplacedBehindItsBack() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            try db.execute(sql: "CREATE VIRTUAL TABLE pages USING dbstat(main)")
            // Left alone: a schema without it does not drop it.
            _ = try db.changeSchema(to: "CREATE TABLE t(x);")
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'pages'") == 1)
            let plan = try db.planSchemaChange(to: "CREATE TABLE t(x); CREATE TABLE pages(x);")
            #expect(plan.refusals.contains { $0.contains("module dbstat") }, "\(plan.refusals)")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anRTreeKeepsItsBoxesThroughANewDimension(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE box USING rtree(id, x0, x1, +label);")
            for id in 1...200 {
                try db.execute(sql: "INSERT INTO box VALUES (?, ?, ?, ?)", arguments: [id * 7, id, id + 1, "b\(id)"])
            }
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE box USING rtree(id, x0, x1, y0, y1, +label);")
        }
        try queue.read { db throws in
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM box") == 200)
            #expect(try db.fetchOne(String.self, sql: "SELECT label FROM box WHERE id = 700") == "b100")
            #expect(try db.fetchAll(Int.self, sql: "SELECT id FROM box WHERE x0 >= 199 ORDER BY id") == [1393, 1400])
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM box WHERE y0 = 0 AND y1 = 0") == 200)
            #expect(try db.fetchOne(String.self, sql: "PRAGMA integrity_check") == "ok")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func droppingAColumnOfAVirtualTableThatHoldsValuesIsRefusedUnlessAllowed(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE doc USING fts5(title, body);")
            try db.execute(sql: "INSERT INTO doc(rowid, title, body) VALUES (5, 'kept', 'lost'), (6, 'kept', NULL)")
        }
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let narrower = "CREATE VIRTUAL TABLE doc USING fts5(title);"
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: narrower) }
        #expect(
            plan.refusals.contains { $0.contains("doc.body") && $0.contains("1 non-NULL value(s)") }, "\(plan.refusals)"
        )
        expectRefused(queue, narrower)
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        var options = SchemaChangeOptions()
        options.allowDropping(column: "body", inTable: "doc")
        try queue.inDatabase { db in _ = try db.changeSchema(to: narrower, options: options) }
        try queue.read { db throws in
            #expect(try matches(db, "doc", "kept") == [5, 6])
            #expect(try db.fetchAll(String.self, sql: "SELECT name FROM pragma_table_info('doc')") == ["title"])
        }
    }

    @Test(arguments: DatabaseKind.allCases, ["fts5(body)", "fts4(body)", "rtree(id, x0, x1)"])
    func anOmittedVirtualTableWithRowsIsRefusedUnlessAllowedAndAnEmptyOneIsDropped(
        kind: DatabaseKind, definition: String
    ) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        let keep = "CREATE TABLE other(id INTEGER PRIMARY KEY);"
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(
                to: keep + "CREATE VIRTUAL TABLE v USING \(definition); CREATE VIRTUAL TABLE e USING \(definition);")
            let values = definition.hasPrefix("rtree") ? "(1, 0, 1), (2, 0, 2)" : "('one'), ('two')"
            try db.execute(sql: "INSERT INTO v VALUES \(values)")
        }
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: keep) }
        #expect(plan.refusals.count == 1, "\(plan.refusals)")
        #expect(plan.refusals.first?.contains("\"v\" holds 2 row(s)") == true, "\(plan.refusals)")
        expectRefused(queue, keep)
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        var options = SchemaChangeOptions()
        options.allowDropping(table: "v")
        try queue.inDatabase { db in _ = try db.changeSchema(to: keep, options: options) }
        // The virtual tables went, and their shadow tables with them.
        #expect(
            try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master") } == ["other"])
    }

    @Test(arguments: DatabaseKind.allCases)
    func anOmittedExternalContentIndexIsDroppedUnlessATriggerOfTheNewSchemaStillFeedsIt(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        // The schema an app wrote when virtual tables had to live in closure steps: its
        // triggers still write into the index it does not list.
        let withoutIndex = Self.notesIndex.components(separatedBy: ";").dropFirst().joined(separator: ";")
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: Self.notesTable + withoutIndex) }
        #expect(plan.refusals.count == 1, "\(plan.refusals)")
        #expect(
            plan.refusals.first?.contains("trigger \"notes_ad\", trigger \"notes_ai\", trigger \"notes_au\"") == true,
            "\(plan.refusals)")
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        // Without the triggers, the index holds nothing of its own and simply goes.
        let dropped = try queue.inDatabase { db in try db.changeSchema(to: Self.notesTable) }
        #expect(dropped.steps.contains { $0.summary.hasPrefix("drop virtual table \"notes_fts\"") }, "\(dropped.sql)")
        try queue.read { db throws in
            #expect(try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master") == ["notes"])
            #expect(try db.fetchOne(Int.self, sql: "SELECT count(*) FROM notes") == 300)
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aChangedExternalContentIndexIsRebuiltFromItsContentTable(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        // The notes get a tag column (ADD COLUMN) and the index indexes it too.
        let table = "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT, tag TEXT DEFAULT 'inbox');"
        let index = Self.notesIndex.replacingOccurrences(of: "title, body", with: "title, body, tag")
            .replacingOccurrences(of: "new.title, new.body", with: "new.title, new.body, new.tag")
            .replacingOccurrences(of: "old.title, old.body", with: "old.title, old.body, old.tag")
        let plan = try queue.inDatabase { db in try db.changeSchema(to: table + index) }
        #expect(plan.steps.contains { $0.statements == ["INSERT INTO \"notes_fts\"(\"notes_fts\") VALUES('rebuild')"] })
        try queue.inDatabase { db throws in
            #expect(try matches(db, "notes_fts", "inbox").count == 300)
            #expect(try matches(db, "notes_fts", "seven").count == 38)
            // The triggers feed the new index.
            try db.execute(sql: "INSERT INTO notes(id, title, body, tag) VALUES (10000, 'fresh', 'x', 'urgent')")
            try db.execute(sql: "UPDATE notes SET tag = 'urgent' WHERE id = 3")
            try db.execute(sql: "DELETE FROM notes WHERE id = 6")
            #expect(try matches(db, "notes_fts", "urgent") == [3, 10000])
            #expect(try matches(db, "notes_fts", "inbox").count == 298)
            try checkIntegrity(db, "notes_fts")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func rebuildingTheContentTableKeepsTheTriggersAndTheIndexRight(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        // body becomes NOT NULL: the 30 NULL bodies take a fill value, which the index must know.
        let table = "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT NOT NULL);"
        var options = SchemaChangeOptions()
        options.fill(column: "body", inTable: "notes", with: "unwritten")
        let plan = try queue.inDatabase { db in try db.changeSchema(to: table + Self.notesIndex, options: options) }
        #expect(plan.rebuiltTables == ["notes"])
        #expect(plan.steps.contains { $0.summary.contains("its content table is rebuilt") }, "\(plan.sql)")
        try queue.inDatabase { db throws in
            #expect(try matches(db, "notes_fts", "unwritten") == (1...30).map { Int64($0 * 30) })
            #expect(try matches(db, "notes_fts", "seven").count == 38)
            try checkIntegrity(db, "notes_fts")
            #expect(
                try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")
                    == ["notes_ad", "notes_ai", "notes_au"])
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (10000, 'fresh', 'needle')")
            try db.execute(sql: "UPDATE notes SET body = 'needle' WHERE id = 30")
            try db.execute(sql: "DELETE FROM notes WHERE id = 60")
            #expect(try matches(db, "notes_fts", "needle") == [30, 10000])
            #expect(try matches(db, "notes_fts", "unwritten").count == 28)
            try checkIntegrity(db, "notes_fts")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anIndexFollowsItsRenamedContentTableAndAStaleContentNameIsRefused(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        var options = SchemaChangeOptions()
        options.renameTable("notes", to: "memo")
        let stale =
            Self.notesTable.replacingOccurrences(of: "notes(", with: "memo(")
            + Self.notesIndex.replacingOccurrences(of: "ON notes", with: "ON memo")
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let refused = try queue.inDatabase { db in try db.planSchemaChange(to: stale, options: options) }
        #expect(refused.refusals.contains { $0.contains("reads its content from \"notes\"") }, "\(refused.refusals)")
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        let renamed = stale.replacingOccurrences(of: "content='notes'", with: "content='memo'")
        try queue.inDatabase { db in _ = try db.changeSchema(to: renamed, options: options) }
        try queue.inDatabase { db throws in
            #expect(try matches(db, "notes_fts", "seven").count == 38)
            try db.execute(sql: "INSERT INTO memo(id, title, body) VALUES (10000, 'fresh', 'needle')")
            #expect(try matches(db, "notes_fts", "needle") == [10000])
            try checkIntegrity(db, "notes_fts")
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func anIndexOverAColumnItsContentTableLacksIsRefusedAtPlanTime(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try seededNotes(kind, in: directory)
        let schema =
            Self.notesTable + Self.notesIndex.replacingOccurrences(of: "fts5(title, body", with: "fts5(title, summary")
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: schema) }
        #expect(plan.refusals.contains { $0.contains("summary") && $0.contains("no such column") }, "\(plan.refusals)")
    }

    @Test(arguments: DatabaseKind.allCases, ["fts5(body, content='')", "fts4(body, content=\"\")"])
    func aContentlessIndexWithRowsCannotBeRefilledSoRecreatingItIsRefusedUnlessAllowed(
        kind: DatabaseKind, definition: String
    ) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: "CREATE VIRTUAL TABLE v USING \(definition);")
            for id in 1...20 {
                try db.execute(sql: "INSERT INTO v(rowid, body) VALUES (?, 'word')", arguments: [id])
            }
        }
        let before = try queue.read { db in try DatabaseSnapshot(db) }
        let changed =
            "CREATE VIRTUAL TABLE v USING \(definition.replacingOccurrences(of: "body", with: "body, extra"));"
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: changed) }
        #expect(plan.refusals.count == 1, "\(plan.refusals)")
        #expect(plan.refusals.first?.contains("contentless: the text of its 20 indexed row(s) is not stored") == true)
        expectRefused(queue, changed)
        #expect(try queue.read { db in try DatabaseSnapshot(db) } == before)
        // Dropping it is refused the same way; allowed, it is recreated empty.
        #expect(try queue.inDatabase { db in try db.planSchemaChange(to: "") }.refusals.count == 1)
        var options = SchemaChangeOptions()
        options.allowDropping(table: "v")
        try queue.inDatabase { db in _ = try db.changeSchema(to: changed, options: options) }
        #expect(try queue.read { db in try matches(db, "v", "word") } == [])
    }

    @Test(arguments: DatabaseKind.allCases)
    func aContentfulTableTurnedIntoAnExternalContentIndexIsRefusedUnlessAllowed(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(to: Self.notesTable + "CREATE VIRTUAL TABLE notes_fts USING fts5(title, body);")
            try db.execute(sql: "INSERT INTO notes_fts(rowid, title, body) VALUES (1, 'only here', 'x')")
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (2, 'in notes', 'y')")
        }
        let schema = Self.notesTable + Self.notesIndex
        let plan = try queue.inDatabase { db in try db.planSchemaChange(to: schema) }
        #expect(plan.refusals.contains { $0.contains("stores 1 row(s)") }, "\(plan.refusals)")
        var options = SchemaChangeOptions()
        options.allowDropping(table: "notes_fts")
        try queue.inDatabase { db in _ = try db.changeSchema(to: schema, options: options) }
        try queue.read { db throws in
            #expect(try matches(db, "notes_fts", "notes") == [2])
            #expect(try matches(db, "notes_fts", "here") == [])
        }
    }

    @Test(arguments: DatabaseKind.allCases)
    func aRoomFTS4EntityKeepsItsIndexThroughARebuildOfItsContentEntity(kind: DatabaseKind) throws {
        // What Room generates for @Fts4(contentEntity = Mail::class).
        func schema(_ mail: String) -> String {
            """
            \(mail);
            CREATE VIRTUAL TABLE IF NOT EXISTS `mail_fts` USING FTS4(`subject` TEXT, `body` TEXT, content=`mail`);
            CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_mail_fts_BEFORE_UPDATE BEFORE UPDATE ON `mail` BEGIN DELETE FROM `mail_fts` WHERE `docid`=OLD.`rowid`; END;
            CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_mail_fts_BEFORE_DELETE BEFORE DELETE ON `mail` BEGIN DELETE FROM `mail_fts` WHERE `docid`=OLD.`rowid`; END;
            CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_mail_fts_AFTER_UPDATE AFTER UPDATE ON `mail` BEGIN INSERT INTO `mail_fts`(`docid`, `subject`, `body`) VALUES (NEW.`rowid`, NEW.`subject`, NEW.`body`); END;
            CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_mail_fts_AFTER_INSERT AFTER INSERT ON `mail` BEGIN INSERT INTO `mail_fts`(`docid`, `subject`, `body`) VALUES (NEW.`rowid`, NEW.`subject`, NEW.`body`); END;
            """
        }
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            _ = try db.changeSchema(
                to: schema(
                    "CREATE TABLE IF NOT EXISTS `mail` (`id` INTEGER NOT NULL, `subject` TEXT, `body` TEXT, PRIMARY KEY(`id`))"
                ))
            for id in 1...100 {
                try db.execute(
                    sql: "INSERT INTO mail(id, subject, body) VALUES (?, ?, ?)",
                    arguments: [id * 2, "subject \(id)", id % 25 == 0 ? "invoice" : "hello"])
            }
            // v2 of the entity: a new NOT NULL column in the middle forces a rebuild.
            let plan = try db.changeSchema(
                to: schema(
                    "CREATE TABLE IF NOT EXISTS `mail` (`id` INTEGER NOT NULL, `sender` TEXT NOT NULL DEFAULT '', `subject` TEXT, `body` TEXT, PRIMARY KEY(`id`))"
                ))
            #expect(plan.rebuiltTables == ["mail"])
            #expect(try matches(db, "mail_fts", "invoice") == [50, 100, 150, 200])
            try db.execute(sql: "UPDATE mail SET body = 'invoice' WHERE id = 2")
            try db.execute(sql: "DELETE FROM mail WHERE id = 100")
            #expect(try matches(db, "mail_fts", "invoice") == [2, 50, 150, 200])
            try checkIntegrity(db, "mail_fts")
        }
    }

    @Test func aVirtualTableOfAnotherModuleIsRefusedWithWhatToDo() throws {
        let queue = try DatabaseQueue()
        let error = #expect(throws: SerialDBError.self) {
            try queue.inDatabase { db throws in
                _ = try db.changeSchema(to: "CREATE TABLE t(x); CREATE VIRTUAL TABLE pages USING dbstat(main);")
            }
        }
        #expect(error?.code == .schemaChangeRefused)
        #expect(error?.message.contains("\"pages\" (dbstat)") == true, "\(String(describing: error))")
        #expect(error?.message.contains("closure step") == true)
        #expect(try queue.read { db in try db.fetchAll(String.self, sql: "SELECT name FROM sqlite_master") } == [])
    }

    @Test func theToolPlansTheVirtualTableStepsMigrateRunsThemAndRefusalsComeAtPlanTime() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("tool.sqlite")
        var configuration = Configuration()
        configuration.journalMode = .delete
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try await queue.inDatabase { db in
            _ = try db.changeSchema(
                to: Self.notesTable + Self.notesIndex + "CREATE VIRTUAL TABLE doc USING fts4(body);")
            try db.execute(sql: "INSERT INTO notes(id, title, body) VALUES (1, 'alpha', 'one'), (2, 'beta', 'two')")
            try db.execute(sql: "INSERT INTO doc(docid, body) VALUES (7, 'seven'), (9, 'nine')")
        }
        try await queue.close()
        func schemaFile(_ sql: String) throws -> String {
            let file = directory.path("schema-\(UUID().uuidString).sql")
            try sql.write(toFile: file, atomically: true, encoding: .utf8)
            return file
        }
        func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path)) }
        let before = try bytes()
        let v2 = try schemaFile(
            Self.notesTable
                + Self.notesIndex.replacingOccurrences(of: "content_rowid='id'", with: "content_rowid='id', prefix='2'")
                + "CREATE VIRTUAL TABLE doc USING fts5(body, tag);")
        let plan = try await ToolRun("serialdb", ["plan", path, "--schema", v2])
        #expect(plan.status == 0, "\(plan.errors)")
        for expected in [
            "-- recreate virtual table \"doc\" (fts5): module fts4 → fts5; new column(s) tag",
            "-- copy the 2 row(s) of \"doc\", with their rowids",
            "INSERT INTO \"serialdb_new_doc\"(rowid, \"body\") SELECT rowid, \"body\" FROM \"doc\";",
            "-- fill the full-text index \"notes_fts\" from \"notes\" (recreated)",
            "INSERT INTO \"notes_fts\"(\"notes_fts\") VALUES('rebuild');",
        ] {
            #expect(plan.output.contains(expected), "\(expected) in \(plan.output)")
        }
        #expect(try bytes() == before, "a plan changes nothing")
        let inspect = try await ToolRun("serialdb", ["inspect", path])
        #expect(inspect.output.contains("virtual table notes_fts (fts5, content from \"notes\")"), "\(inspect.output)")
        #expect(inspect.output.contains("virtual table doc (fts4)"), "\(inspect.output)")
        #expect(!inspect.output.contains("_segdir") && !inspect.output.contains("_docsize"), "\(inspect.output)")
        let migrate = try await ToolRun("serialdb", ["migrate", path, "--schema", v2])
        #expect(migrate.status == 0, "\(migrate.errors)")
        // migrate printed the plan it ran: the same steps `plan` announced.
        #expect(migrate.output.hasPrefix(plan.output.trimmingCharacters(in: .newlines)), "\(migrate.output)")
        try await DatabaseQueue(path: path).inDatabase { db throws in
            #expect(try matches(db, "doc", "nine") == [9])
            #expect(try matches(db, "notes_fts", "be*") == [2])
        }
        // Omitting the table that stores rows is refused before anything is touched.
        let v3 = try schemaFile(Self.notesTable + Self.notesIndex)
        let afterMigrate = try bytes()
        let refused = try await ToolRun("serialdb", ["migrate", path, "--schema", v3])
        #expect(refused.status == 3)
        #expect(refused.errors.contains("refused: The fts5 table \"doc\" holds 2 row(s)"), "\(refused.errors)")
        #expect(try bytes() == afterMigrate)
        let allowed = try await ToolRun("serialdb", ["migrate", path, "--schema", v3, "--allow-drop", "doc"])
        #expect(allowed.status == 0, "\(allowed.errors)")
        #expect(allowed.output.contains("-- drop virtual table \"doc\" (fts5)"))
    }
}
