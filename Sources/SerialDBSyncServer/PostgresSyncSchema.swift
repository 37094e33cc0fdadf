/// The tables of ``PostgresSyncStore`` in PostgreSQL, step by step: step N brings a database at
/// schema version N - 1 to N, and `serialdb_sync_schema` holds the version reached, so a later
/// release adds a step and upgrades stores in place.
enum PostgresSyncSchema {
    /// Taken (as a transaction-level advisory lock) while the schema is checked and created:
    /// server processes starting together on a new database create it once.
    static let advisoryLock = "7301733071"

    /// The steps, in order; their count is the schema version this release writes.
    static let steps = [
        """
        CREATE TABLE serialdb_sync_state(
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version BIGINT NOT NULL,
            purge_floor BIGINT NOT NULL);
        INSERT INTO serialdb_sync_state(id, version, purge_floor) VALUES (1, 0, 0);
        CREATE TABLE serialdb_sync_row(
            table_name TEXT NOT NULL,
            owner TEXT NOT NULL,
            key TEXT NOT NULL,
            version BIGINT NOT NULL,
            deleted BOOLEAN NOT NULL,
            row_json TEXT NOT NULL,
            PRIMARY KEY (table_name, owner, key));
        CREATE INDEX serialdb_sync_row_by_version ON serialdb_sync_row(table_name, owner, version);
        CREATE INDEX serialdb_sync_tombstone ON serialdb_sync_row(version) WHERE deleted;
        CREATE TABLE serialdb_sync_applied(
            account TEXT NOT NULL,
            client_id TEXT NOT NULL,
            seq BIGINT NOT NULL,
            status TEXT NOT NULL,
            version BIGINT,
            deleted BOOLEAN,
            row_json TEXT,
            message TEXT,
            PRIMARY KEY (account, client_id, seq));
        """,
        """
        CREATE TABLE serialdb_sync_unique(
            table_name TEXT NOT NULL,
            owner TEXT NOT NULL,
            value TEXT NOT NULL,
            key TEXT NOT NULL);
        -- Indexed by digest: a btree entry holds about 2.7 kB at most, and values may be longer.
        CREATE UNIQUE INDEX serialdb_sync_unique_value ON serialdb_sync_unique(table_name, owner, md5(value));
        CREATE INDEX serialdb_sync_unique_by_key ON serialdb_sync_unique(table_name, owner, md5(key));
        CREATE TABLE serialdb_sync_definition(
            table_name TEXT PRIMARY KEY,
            schema TEXT NOT NULL);
        """,
        // Partial, and so usable only by a statement that says `version > 0` (the fetches; every
        // stored version is at least 1): a key lookup that PostgreSQL, when the statistics
        // predate the rows, would run through it (reading all the owner's rows and filtering
        // them) is left with the primary key.
        """
        DROP INDEX serialdb_sync_row_by_version;
        CREATE INDEX serialdb_sync_row_by_version ON serialdb_sync_row(table_name, owner, version) WHERE version > 0;
        """,
        // Results age out (purgeResults); the highest seq answered per client stays. Results
        // recorded before this step count as recorded now, and set their clients' marks.
        """
        ALTER TABLE serialdb_sync_applied ADD COLUMN recorded_at BIGINT NOT NULL DEFAULT 0;
        UPDATE serialdb_sync_applied SET recorded_at = extract(epoch FROM now())::bigint;
        CREATE INDEX serialdb_sync_applied_by_age ON serialdb_sync_applied(recorded_at);
        CREATE TABLE serialdb_sync_client(
            account TEXT NOT NULL,
            client_id TEXT NOT NULL,
            highest_seq BIGINT NOT NULL,
            PRIMARY KEY (account, client_id));
        INSERT INTO serialdb_sync_client(account, client_id, highest_seq)
        SELECT account, client_id, max(seq) FROM serialdb_sync_applied GROUP BY account, client_id;
        """,
    ]

    /// Creates the tables, or upgrades them, in one transaction; nothing when they are current.
    ///
    /// - Throws: ``SyncServerError/Code/invalidStore`` when a newer release wrote the schema;
    ///   ``PostgresError`` when PostgreSQL refuses.
    static func prepare(_ connection: PostgresConnection) throws {
        try connection.transaction {
            try connection.execute("SELECT pg_advisory_xact_lock(\(advisoryLock))")
            try connection.execute(
                """
                CREATE TABLE IF NOT EXISTS serialdb_sync_schema(
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    version INTEGER NOT NULL)
                """)
            let found = try connection.execute("SELECT version FROM serialdb_sync_schema WHERE id = 1")
            let current = found.count == 0 ? 0 : Int(try found.int64(0, 0) ?? 0)
            guard current <= steps.count else {
                throw SyncServerError(
                    .invalidStore,
                    "the PostgreSQL sync store has schema version \(current), written by a newer release "
                        + "(this one knows \(steps.count)); run the newer serialdb-sync-server")
            }
            guard current < steps.count else { return }
            for step in steps[current...] {
                try connection.execute(step)
            }
            try connection.execute(
                """
                INSERT INTO serialdb_sync_schema(id, version) VALUES (1, \(steps.count))
                ON CONFLICT (id) DO UPDATE SET version = excluded.version
                """)
        }
    }
}
