import Foundation
import SerialDBSyncServer
import Testing

/// The configuration the tests serve: the README's two tables (`note`, `country`), a table of every affinity with
/// defaults, and a table with a composite key; two accounts.
enum SyncFixtures {
    static let configurationJSON = #"""
        {"tables": [
           {"name": "note", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)"},
           {"name": "country", "scope": "global", "struct_version": 1,
            "schema": "CREATE TABLE country(code TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL)"},
           {"name": "item", "scope": "account", "struct_version": 3,
            "schema": "CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT NOT NULL DEFAULT 'none', price REAL, data BLOB, amount NUMERIC, created TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, anything); CREATE INDEX item_label ON item(label)"},
           {"name": "pair", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE pair(a TEXT NOT NULL, b BLOB NOT NULL, value INTEGER, PRIMARY KEY (a, b)) WITHOUT ROWID"}],
         "tokens": [{"token": "t-alice", "account": "alice"}, {"token": "t-bob", "account": "bob"}]}
        """#

    static func configuration() throws -> SyncServerConfiguration {
        try SyncServerConfiguration(json: Data(configurationJSON.utf8))
    }

    /// Tables whose definitions constrain rows beyond types: CHECK, UNIQUE with collations, a
    /// default that becomes infinite once a row was tried, and a one-letter column name.
    static let constrainedJSON = #"""
        {"tables": [
           {"name": "counted", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE counted(id INTEGER PRIMARY KEY, n INTEGER NOT NULL DEFAULT 0 CHECK (n >= 0), label TEXT DEFAULT 'x')"},
           {"name": "person", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE person(id INTEGER PRIMARY KEY, email TEXT COLLATE NOCASE UNIQUE, nick TEXT, code TEXT COLLATE RTRIM, score REAL); CREATE UNIQUE INDEX person_nick ON person(nick); CREATE UNIQUE INDEX person_code_score ON person(code, score)"},
           {"name": "unit", "scope": "account", "struct_version": 1,
            "schema": "CREATE TABLE unit(id INTEGER PRIMARY KEY, k TEXT, r REAL DEFAULT (CASE WHEN last_insert_rowid() > 0 THEN 1e999 ELSE 0.5 END))"}],
         "tokens": [{"token": "t-alice", "account": "alice"}, {"token": "t-bob", "account": "bob"}]}
        """#

    static func constrained() throws -> SyncServerConfiguration {
        try SyncServerConfiguration(json: Data(constrainedJSON.utf8))
    }

    /// The message of the ``SyncServerError/Code/invalidConfiguration`` `body` throws, or `nil`
    /// when it succeeds (another error is recorded as an issue and described).
    static func refusal(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as SyncServerError {
            #expect(error.code == .invalidConfiguration)
            return error.message
        } catch {
            Issue.record("not a configuration error: \(error)")
            return "\(error)"
        }
    }
}
