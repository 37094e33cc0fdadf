/// Every workload, in the order they run. Adding one is one entry here plus one function on
/// each side (`SerialDBSide`, `RawCSide`).
enum WorkloadCatalog {
    /// The workloads with their full sizes divided by `divisor` (20 for `--quick`).
    static func workloads(divisor: Int) -> [Workload] {
        let rows = 100_000 / divisor
        let smallTransactions = 10_000 / divisor
        let observedCommits = 2_000 / divisor
        let threads = 8
        let perThread = 2_000 / divisor
        let roundTrips = 100_000 / divisor
        let bigTable = 1_000_000 / divisor
        let poolSizes = PoolWorkloads.Sizes(
            readers: 8, pages: max(1, 400 / divisor), pageRows: 100, tableRows: 10_000, writes: max(1, 1_000 / divisor))
        let syncRows = 10_000 / divisor
        return [
            Workload(
                name: "insert_one_tx", operations: rows, expected: .rows(rows, operations: rows), target: 1.15,
                serialDB: { try SerialDBSide.insertOneTransaction(path: $0, rows: rows) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: rows) }),
            // The same rows bound from an array of DatabaseValue, the way the library's own row
            // paths (sync downloads, table copies) bind them.
            Workload(
                name: "insert_values_one_tx", operations: rows, expected: .rows(rows, operations: rows),
                target: nil,
                serialDB: { try SerialDBSide.insertValuesOneTransaction(path: $0, rows: rows) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: rows) }),
            Workload(
                name: "small_txs", operations: smallTransactions,
                expected: .rows(smallTransactions, operations: smallTransactions), target: 1.15,
                serialDB: { try SerialDBSide.smallTransactions(path: $0, count: smallTransactions) },
                rawC: { try RawCSide.smallTransactions(path: $0, count: smallTransactions) }),
            // The same with an observation of another table running: the price of the hooks
            // (goal: within 5 % of small_txs).
            Workload(
                name: "small_txs_observed", operations: smallTransactions,
                expected: .rows(smallTransactions, operations: smallTransactions), target: nil,
                serialDB: {
                    try ObservedWorkloads.smallTransactions(
                        path: $0, count: smallTransactions, observers: 1, observedTable: "u")
                },
                rawC: { try RawCSide.smallTransactions(path: $0, count: smallTransactions) }),
            // Commit, then wait for the observing consumer to hold the new value (prints p50/p99).
            Workload(
                name: "observed_commit_latency", operations: observedCommits,
                expected: .rows(observedCommits, operations: observedCommits), target: nil,
                serialDB: { try ObservedWorkloads.commitLatency(path: $0, count: observedCommits) },
                rawC: { try RawCSide.smallTransactions(path: $0, count: observedCommits) }),
            // 100 observations of the table written: each commit re-runs the ones ready for a value.
            Workload(
                name: "small_txs_100_observers", operations: observedCommits,
                expected: .rows(observedCommits, operations: observedCommits), target: nil,
                serialDB: {
                    try ObservedWorkloads.smallTransactions(
                        path: $0, count: observedCommits, observers: 100, observedTable: "t")
                },
                rawC: { try RawCSide.smallTransactions(path: $0, count: observedCommits) }),
            Workload(
                name: "fetch_rowdecodable", operations: rows, expected: .rows(rows, operations: rows), target: 1.2,
                serialDB: { try SerialDBSide.fetchRowDecodable(path: $0, rows: rows) },
                rawC: { try RawCSide.fetchAll(path: $0, rows: rows) }),
            Workload(
                name: "fetch_decodable", operations: rows, expected: .rows(rows, operations: rows), target: 2.0,
                serialDB: { try SerialDBSide.fetchDecodable(path: $0, rows: rows) },
                rawC: { try RawCSide.fetchAll(path: $0, rows: rows) }),
            Workload(
                name: "contended_writes", operations: threads * perThread,
                expected: .rows(threads * perThread, operations: threads * perThread), target: 1.5,
                serialDB: { try SerialDBSide.contendedWrites(path: $0, threads: threads, perThread: perThread) },
                rawC: { try RawCSide.contendedWrites(path: $0, threads: threads, perThread: perThread) }),
            Workload(
                name: "empty_write", operations: roundTrips, expected: .rows(0, operations: roundTrips), target: 1.3,
                serialDB: { try SerialDBSide.emptyWrites(path: $0, count: roundTrips) },
                rawC: { try RawCSide.emptyWrites(path: $0, count: roundTrips) }),
            // The same with slow-block reports and statistics on: their price (goal: < 2 % more).
            Workload(
                name: "empty_write_health", operations: roundTrips, expected: .rows(0, operations: roundTrips),
                target: nil,
                serialDB: { try SerialDBSide.emptyWrites(path: $0, count: roundTrips, measured: true) },
                rawC: { try RawCSide.emptyWrites(path: $0, count: roundTrips) }),
            Workload(
                name: "empty_read", operations: roundTrips, expected: .rows(0, operations: roundTrips), target: 1.3,
                serialDB: { try SerialDBSide.emptyReads(path: $0, count: roundTrips) },
                rawC: { try RawCSide.emptyReads(path: $0, count: roundTrips) }),
            // Reads on 8 threads beside one writer: a pool against a C connection per thread.
            Workload(
                name: "concurrent_reads", operations: poolSizes.rowsRead,
                expected: .rows(poolSizes.tableRows + poolSizes.writes, operations: poolSizes.rowsRead), target: 1.3,
                serialDB: { try PoolWorkloads.serialDBConcurrentReads(path: $0, sizes: poolSizes) },
                rawC: { try PoolWorkloads.rawCConcurrentReads(path: $0, sizes: poolSizes) }),
            Workload(
                name: "pool_empty_read", operations: roundTrips, expected: .rows(0, operations: roundTrips),
                target: nil,
                serialDB: { try PoolWorkloads.serialDBEmptyReads(path: $0, count: roundTrips) },
                rawC: { try RawCSide.emptyReads(path: $0, count: roundTrips) }),
            Workload(
                name: "rebuild_1m", operations: bigTable, expected: .rows(bigTable, operations: bigTable), target: 1.2,
                serialDB: { try SerialDBSide.rebuild(path: $0, rows: bigTable) },
                rawC: { try RawCSide.rebuild(path: $0, rows: bigTable) }),
            // The same change online (prepareMigration, then migrate), against the same C
            // rebuild: the whole, and the swap alone, which is all other work waits for.
            Workload(
                name: "rebuild_1m_online", operations: bigTable, expected: .rows(bigTable, operations: bigTable),
                target: nil, serialDB: { try OnlineRebuild.run(path: $0, rows: bigTable, timed: .whole) },
                rawC: { try RawCSide.rebuild(path: $0, rows: bigTable) }),
            Workload(
                name: "rebuild_1m_online_swap", operations: bigTable,
                expected: .rows(bigTable, operations: bigTable), target: nil,
                serialDB: { try OnlineRebuild.run(path: $0, rows: bigTable, timed: .swap) },
                rawC: { try RawCSide.rebuild(path: $0, rows: bigTable) }),
            // ADD COLUMN rewrites only the schema: its cost must not grow with the row count.
            Workload(
                name: "add_column_1k", operations: 1, expected: .rows(1_000, operations: 1), target: nil,
                serialDB: { try SerialDBSide.addColumn(path: $0, rows: 1_000) },
                rawC: { try RawCSide.addColumn(path: $0, rows: 1_000) }),
            Workload(
                name: "add_column_1m", operations: 1, expected: .rows(bigTable, operations: 1), target: nil,
                serialDB: { try SerialDBSide.addColumn(path: $0, rows: bigTable) },
                rawC: { try RawCSide.addColumn(path: $0, rows: bigTable) }),
            // The sync server over loopback HTTP (the "serialdb" side) against raw C writing or
            // reading the same rows locally: the ratio is the price of the network protocol.
            Workload(
                name: "sync_post_10k", operations: syncRows, expected: .rows(syncRows, operations: syncRows),
                target: nil,
                serialDB: { try SyncSide.post(path: $0, rows: syncRows) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: syncRows) }),
            Workload(
                name: "sync_fetch_10k", operations: syncRows, expected: .rows(syncRows, operations: syncRows),
                target: nil,
                serialDB: { try SyncSide.fetch(path: $0, rows: syncRows) },
                rawC: { try RawCSide.fetchAll(path: $0, rows: syncRows) }),
            // The same on the PostgreSQL store (skipped, with a line saying why, without a PostgreSQL).
            Workload(
                name: "sync_post_10k_postgres", operations: syncRows,
                expected: .rows(syncRows, operations: syncRows), target: nil,
                serialDB: { try SyncSide.post(path: $0, rows: syncRows, store: .postgres) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: syncRows) }),
            Workload(
                name: "sync_fetch_10k_postgres", operations: syncRows,
                expected: .rows(syncRows, operations: syncRows), target: nil,
                serialDB: { try SyncSide.fetch(path: $0, rows: syncRows, store: .postgres) },
                rawC: { try RawCSide.fetchAll(path: $0, rows: syncRows) }),
            // The same rows through the sync client, as an app syncs: reading the outbox and
            // settling each result, or creating the table and applying each page with its
            // cursor, against raw C inserting the rows locally.
            Workload(
                name: "sync_client_upload_10k", operations: syncRows,
                expected: .rows(syncRows, operations: syncRows), target: nil,
                serialDB: { try SyncClientSide.upload(path: $0, rows: syncRows) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: syncRows) }),
            Workload(
                name: "sync_client_download_10k", operations: syncRows,
                expected: .rows(syncRows, operations: syncRows), target: nil,
                serialDB: { try SyncClientSide.download(path: $0, rows: syncRows) },
                rawC: { try RawCSide.insertOneTransaction(path: $0, rows: syncRows) }),
        ]
    }

    /// The names `--only` accepts.
    static var names: [String] {
        workloads(divisor: 1).map(\.name)
    }
}
