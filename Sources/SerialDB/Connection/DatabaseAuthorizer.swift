import CSQLite
import Foundation

/// The connection's one SQLite authorizer, shared by everything that needs one: SQLite keeps a
/// single authorizer per connection, so each purpose sets its field here and calls
/// ``Database/updateAuthorizer()`` instead of installing a callback of its own.
///
/// - `refusal`: set while ``Database/refusingTransactionControl(in:_:)`` runs; BEGIN, COMMIT,
///   END and ROLLBACK are denied and the first verb is recorded.
/// - `readTables`: set while ``Database/recordingReads(_:)`` runs; every table a statement reads
///   (`SQLITE_READ`, views and triggers included) is added, in lowercase.
/// - `watchesSchema`: set while observations watch the writer; a statement that changes the
///   schema (CREATE, DROP, ALTER, or a write to `sqlite_schema`) sets `schemaChangePrepared`
///   as it is compiled.
///
/// The callback runs only while SQLite compiles a statement (`sqlite3_prepare`, or the
/// recompile a step does after a schema change), never per row. Installing expires the
/// connection's prepared statements, so they are compiled again, through it, on their next step.
/// See <https://www.sqlite.org/c3ref/set_authorizer.html>.
final class DatabaseAuthorizer {
    var refusal: TransactionControlRefusal?
    var readTables: Set<String>?
    var watchesSchema = false
    /// A statement that changes the schema was compiled since the observers last looked.
    var schemaChangePrepared = false

    var isNeeded: Bool { refusal != nil || readTables != nil || watchesSchema }

    /// The C callback; `context` is this object, unretained (the connection owns it).
    fileprivate static let callback:
        @convention(c) (
            UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
            UnsafePointer<CChar>?, UnsafePointer<CChar>?
        ) -> Int32 = { context, action, first, _, _, _ in
            guard let context else { return SQLITE_OK }
            let authorizer = Unmanaged<DatabaseAuthorizer>.fromOpaque(context).takeUnretainedValue()
            return authorizer.authorize(action, first)
        }

    private func authorize(_ action: Int32, _ first: UnsafePointer<CChar>?) -> Int32 {
        switch action {
        case SQLITE_READ:
            if readTables != nil, let first { readTables?.insert(Self.lowercased(first)) }
        case SQLITE_TRANSACTION:
            if let refusal {
                if refusal.verb == nil { refusal.verb = first.map { String(cString: $0) } ?? "COMMIT" }
                return SQLITE_DENY
            }
        case SQLITE_CREATE_INDEX, SQLITE_CREATE_TABLE, SQLITE_CREATE_TEMP_INDEX, SQLITE_CREATE_TEMP_TABLE,
            SQLITE_CREATE_TEMP_TRIGGER, SQLITE_CREATE_TEMP_VIEW, SQLITE_CREATE_TRIGGER, SQLITE_CREATE_VIEW,
            SQLITE_DROP_INDEX, SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_INDEX, SQLITE_DROP_TEMP_TABLE,
            SQLITE_DROP_TEMP_TRIGGER, SQLITE_DROP_TEMP_VIEW, SQLITE_DROP_TRIGGER, SQLITE_DROP_VIEW,
            SQLITE_ALTER_TABLE, SQLITE_CREATE_VTABLE, SQLITE_DROP_VTABLE:
            if watchesSchema { schemaChangePrepared = true }
        case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE:
            // `PRAGMA writable_schema` edits of the schema table itself.
            if watchesSchema, let first, Self.isSchemaTable(first) { schemaChangePrepared = true }
        default:
            break
        }
        return SQLITE_OK
    }

    private static func isSchemaTable(_ name: UnsafePointer<CChar>) -> Bool {
        let lowered = lowercased(name)
        return lowered == "sqlite_master" || lowered == "sqlite_schema" || lowered == "sqlite_temp_master"
            || lowered == "sqlite_temp_schema"
    }

    /// SQLite compares names case-insensitively in ASCII only: A-Z folds, nothing else does.
    static func lowercased(_ name: UnsafePointer<CChar>) -> String {
        let length = strlen(name)
        return name.withMemoryRebound(to: UInt8.self, capacity: length) { bytes in
            String(unsafeUninitializedCapacity: length) { buffer in
                for index in 0..<length {
                    let byte = bytes[index]
                    buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte + 0x20 : byte
                }
                return length
            }
        }
    }
}

extension Database {
    /// Installs the shared authorizer when one of its purposes is set, removes it otherwise.
    /// Installing again (a second purpose) expires the prepared statements again, so the new
    /// purpose sees every statement that runs from now on.
    func updateAuthorizer() {
        guard let handle else { return }
        if authorizer.isNeeded {
            sqlite3_set_authorizer(handle, DatabaseAuthorizer.callback, Unmanaged.passUnretained(authorizer).toOpaque())
        } else {
            sqlite3_set_authorizer(handle, nil, nil)
        }
    }

    /// Runs `body` and returns, with its result, the tables its statements read (lowercase),
    /// as SQLite reports them while compiling: the tables behind views and triggers included,
    /// with no SQL parsed here.
    func recordingReads<T>(_ body: () throws -> T) throws -> (T, Set<String>) {
        // A recording inside another adds its tables to the outer one's too.
        let outer = authorizer.readTables
        authorizer.readTables = []
        updateAuthorizer()
        var tables: Set<String> = []
        defer {
            authorizer.readTables = outer.map { $0.union(tables) }
            updateAuthorizer()
        }
        let result = try body()
        tables = authorizer.readTables ?? []
        return (result, tables)
    }
}
