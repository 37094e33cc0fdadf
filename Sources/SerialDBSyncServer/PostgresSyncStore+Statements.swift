extension PostgresSyncStore {
    /// Every statement the store runs, prepared once per connection. Those that read rows by
    /// version say `version > 0` (true of every stored row), the predicate of the partial index
    /// `serialdb_sync_row_by_version`.
    static let latest = PostgresStatement(
        name: "serialdb_latest",
        sql: """
            SELECT (SELECT coalesce(max(r.version), 0) FROM serialdb_sync_row AS r
                    WHERE r.table_name = k.table_name AND r.owner = k.owner AND r.version > 0)
            FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS k(table_name, owner, position)
            ORDER BY k.position
            """)

    /// The purge floor (always one row) and the page after it, from one snapshot. $4 is
    /// one more than the page's limit, $5 its byte budget, $6 the bytes around each row. The
    /// first change, and those after it that fit, come with their JSON; the first that does not
    /// (by count, or by its running size, which comes from the stored sizes without reading the
    /// values) comes with NULL instead, saying that more follow; the rest are not returned.
    static let page = PostgresStatement(
        name: "serialdb_page",
        sql: """
            SELECT s.purge_floor, r.version, r.deleted, r.row_json
            FROM serialdb_sync_state AS s
            LEFT JOIN LATERAL (
                SELECT version, deleted,
                       CASE WHEN position < $4::bigint AND (position = 1 OR running <= $5::bigint)
                            THEN row_json END AS row_json
                FROM (
                    SELECT version, deleted, row_json, row_number() OVER w AS position,
                           sum(octet_length(row_json) + $6::bigint) OVER w AS running,
                           octet_length(row_json) + $6::bigint AS size
                    FROM (
                        SELECT version, deleted, row_json FROM serialdb_sync_row
                        WHERE table_name = $1 AND owner = $2 AND version > $3::bigint AND version > 0
                        ORDER BY version LIMIT $4::bigint) AS candidates
                    WINDOW w AS (ORDER BY version ROWS UNBOUNDED PRECEDING)) AS sized
                WHERE position <= 2 OR running - size <= $5::bigint) AS r ON true
            WHERE s.id = 1
            ORDER BY r.version
            """)

    /// Takes the counter's row lock for the rest of the transaction: writers commit one after
    /// the other, in version order.
    static let lockCounter = PostgresStatement(
        name: "serialdb_lock_counter", sql: "SELECT version FROM serialdb_sync_state WHERE id = 1 FOR UPDATE")

    /// ``lockCounter`` for an upload, with the highest seq answered to the client ($1, $2;
    /// NULL for one never seen), read through its primary key.
    static let lockForUpload = PostgresStatement(
        name: "serialdb_lock_for_upload",
        sql: """
            SELECT s.version,
                   (SELECT c.highest_seq FROM serialdb_sync_client AS c WHERE c.account = $1 AND c.client_id = $2)
            FROM serialdb_sync_state AS s WHERE s.id = 1 FOR UPDATE OF s
            """)

    static let lockState = PostgresStatement(
        name: "serialdb_lock_state",
        sql: "SELECT version, purge_floor FROM serialdb_sync_state WHERE id = 1 FOR UPDATE")

    static let advanceCounter = PostgresStatement(
        name: "serialdb_advance_counter",
        sql: "UPDATE serialdb_sync_state SET version = version + $1::bigint WHERE id = 1 RETURNING version")

    /// The results remembered for the seqs, one primary-key lookup per seq (with `seq = ANY`,
    /// PostgreSQL may read every result of the client and filter them).
    static let findApplied = PostgresStatement(
        name: "serialdb_find_applied",
        sql: """
            SELECT a.seq, a.status, a.version, a.deleted, a.row_json, a.message
            FROM unnest($3::bigint[]) AS s(seq)
            CROSS JOIN LATERAL (
                SELECT * FROM serialdb_sync_applied AS a
                WHERE a.account = $1 AND a.client_id = $2 AND a.seq = s.seq
                LIMIT 1) AS a
            """)

    /// The stored state of each key. Each key is looked up on its own (a LATERAL subquery with
    /// LIMIT is never turned into a join), through the primary key, the only index it can use
    /// (see `PostgresSyncSchema`). With the keys joined to the table instead, PostgreSQL hashes
    /// the whole table once it guesses that is cheaper than a few thousand lookups, and an
    /// upload costs as much as the store is large.
    static let findCurrent = PostgresStatement(
        name: "serialdb_find_current",
        sql: """
            SELECT r.table_name, r.owner, r.key, r.version, r.deleted, r.row_json
            FROM unnest($1::text[], $2::text[], $3::text[]) AS k(table_name, owner, key)
            CROSS JOIN LATERAL (
                SELECT * FROM serialdb_sync_row AS r
                WHERE r.table_name = k.table_name AND r.owner = k.owner AND r.key = k.key
                LIMIT 1) AS r
            """)

    /// Rows of keys the store does not hold (see ``writeRows`` for those it does).
    static let insertRows = PostgresStatement(
        name: "serialdb_insert_rows",
        sql: """
            INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row_json)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[], $6::text[])
            """)

    static let writeRows = PostgresStatement(
        name: "serialdb_write_rows",
        sql: """
            INSERT INTO serialdb_sync_row(table_name, owner, key, version, deleted, row_json)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[], $6::text[])
            ON CONFLICT (table_name, owner, key)
            DO UPDATE SET version = excluded.version, deleted = excluded.deleted, row_json = excluded.row_json
            """)

    static let recordApplied = PostgresStatement(
        name: "serialdb_record_applied",
        sql: """
            INSERT INTO serialdb_sync_applied(
                account, client_id, seq, status, version, deleted, row_json, message, recorded_at)
            SELECT $1, $2, u.*, $9::bigint
            FROM unnest($3::bigint[], $4::text[], $5::bigint[], $6::boolean[], $7::text[], $8::text[]) AS u
            """)

    static let raiseHighest = PostgresStatement(
        name: "serialdb_raise_highest",
        sql: """
            INSERT INTO serialdb_sync_client(account, client_id, highest_seq) VALUES ($1, $2, $3::bigint)
            ON CONFLICT (account, client_id)
            DO UPDATE SET highest_seq = greatest(serialdb_sync_client.highest_seq, excluded.highest_seq)
            """)

    static let purgeResults = PostgresStatement(
        name: "serialdb_purge_results", sql: "DELETE FROM serialdb_sync_applied WHERE recorded_at < $1::bigint")

    static let purge = PostgresStatement(
        name: "serialdb_purge", sql: "DELETE FROM serialdb_sync_row WHERE deleted AND version <= $1::bigint")

    static let raiseFloor = PostgresStatement(
        name: "serialdb_raise_floor", sql: "UPDATE serialdb_sync_state SET purge_floor = $1::bigint WHERE id = 1")

    static let currentVersion = PostgresStatement(
        name: "serialdb_current_version", sql: "SELECT version FROM serialdb_sync_state WHERE id = 1")

    /// Per table: live rows, tombstones, highest version; and on every row the number of
    /// owners holding rows (one row of NULLs when the store holds none).
    static let summary = PostgresStatement(
        name: "serialdb_summary",
        sql: """
            SELECT t.table_name, t.live, t.tombstones, t.highest, o.accounts
            FROM (SELECT count(DISTINCT owner) AS accounts FROM serialdb_sync_row WHERE owner <> '') AS o
            LEFT JOIN (
                SELECT table_name, count(*) FILTER (WHERE NOT deleted) AS live,
                       count(*) FILTER (WHERE deleted) AS tombstones, max(version) AS highest
                FROM serialdb_sync_row GROUP BY table_name) AS t ON true
            """)

    static let purgeFloor = PostgresStatement(
        name: "serialdb_purge_floor", sql: "SELECT purge_floor FROM serialdb_sync_state WHERE id = 1")

    /// The unique values the upload's values collide with ($1-$3), and every value the keys it
    /// touches hold now ($4-$6). Both go through the md5 indexes, one lookup per value or key
    /// (OFFSET 0 keeps each LATERAL subquery a lookup, never a join over the whole table; see
    /// ``findCurrent``).
    static let findUnique = PostgresStatement(
        name: "serialdb_find_unique",
        sql: """
            SELECT u.table_name, u.owner, u.value, u.key
            FROM unnest($1::text[], $2::text[], $3::text[]) AS v(table_name, owner, value)
            CROSS JOIN LATERAL (
                SELECT * FROM serialdb_sync_unique AS u
                WHERE u.table_name = v.table_name AND u.owner = v.owner AND md5(u.value) = md5(v.value)
                  AND u.value = v.value
                OFFSET 0) AS u
            UNION
            SELECT u.table_name, u.owner, u.value, u.key
            FROM unnest($4::text[], $5::text[], $6::text[]) AS k(table_name, owner, key)
            CROSS JOIN LATERAL (
                SELECT * FROM serialdb_sync_unique AS u
                WHERE u.table_name = k.table_name AND u.owner = k.owner AND md5(u.key) = md5(k.key)
                  AND u.key = k.key
                OFFSET 0) AS u
            """)

    /// Deletes the values the keys hold: the rows are found by lookups as in ``findUnique``,
    /// then deleted by their physical address (a TID scan).
    static let releaseUnique = PostgresStatement(
        name: "serialdb_release_unique",
        sql: """
            DELETE FROM serialdb_sync_unique
            WHERE ctid = ANY (ARRAY(
                SELECT u.ctid
                FROM unnest($1::text[], $2::text[], $3::text[]) AS k(table_name, owner, key)
                CROSS JOIN LATERAL (
                    SELECT ctid FROM serialdb_sync_unique AS u
                    WHERE u.table_name = k.table_name AND u.owner = k.owner AND md5(u.key) = md5(k.key)
                      AND u.key = k.key
                    OFFSET 0) AS u))
            """)

    static let holdUnique = PostgresStatement(
        name: "serialdb_hold_unique",
        sql: """
            INSERT INTO serialdb_sync_unique(table_name, owner, value, key)
            SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])
            """)

    static let findDefinition = PostgresStatement(
        name: "serialdb_find_definition", sql: "SELECT schema FROM serialdb_sync_definition WHERE table_name = $1")

    static let recordDefinition = PostgresStatement(
        name: "serialdb_record_definition",
        sql: """
            INSERT INTO serialdb_sync_definition(table_name, schema) VALUES ($1, $2)
            ON CONFLICT (table_name) DO UPDATE SET schema = excluded.schema
            """)

    static let forgetDefinition = PostgresStatement(
        name: "serialdb_forget_definition", sql: "DELETE FROM serialdb_sync_definition WHERE table_name = $1")

    static let renameRows = PostgresStatement(
        name: "serialdb_rename_rows", sql: "UPDATE serialdb_sync_row SET table_name = $1 WHERE table_name = $2")

    static let tableRows = PostgresStatement(
        name: "serialdb_table_rows",
        sql:
            "SELECT owner, key, version, deleted, row_json FROM serialdb_sync_row WHERE table_name = $1 ORDER BY version"
    )

    static let dropTableRows = PostgresStatement(
        name: "serialdb_drop_table_rows", sql: "DELETE FROM serialdb_sync_row WHERE table_name = $1")

    static let dropTableUnique = PostgresStatement(
        name: "serialdb_drop_table_unique", sql: "DELETE FROM serialdb_sync_unique WHERE table_name = $1")
}
