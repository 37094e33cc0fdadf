/// A statement a ``PostgresSyncStore`` runs again and again: prepared once per connection under
/// its name (`PQprepare`), then executed with its values as parameters (`PQexecPrepared`).
struct PostgresStatement: Sendable {
    /// The name it is prepared under, unique in the store.
    let name: String
    /// The SQL, with `$1`, `$2`... for the values.
    let sql: String
}
