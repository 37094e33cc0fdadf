/// The text `stress --help` prints, and a bad command line prints after its error.
extension StressOptions {
    static let usage = """
        usage: stress [SCENARIO] [OPTIONS]

        Runs SerialDB under concurrent writes during a schema upgrade that rebuilds a table, and
        checks that every acknowledged write is kept exactly once.

        Scenarios:
          migrate-under-load  (default) writer threads and async tasks insert and update rows in a
                              file database while the upgrade rebuilds their table
          crash               a child process runs the upgrade under load and is killed with
                              SIGKILL at a random moment, many times; the file is checked each time
          faults              the upgrade through a VFS that fails its k-th write or sync
          sync                devices over 3 accounts write, go offline and sync with a sync server
                              in a child process; syncs in child processes and the server are
                              killed with SIGKILL at random moments; after final quiet syncs every
                              device must hold its account's rows, nothing lost, leaked or revived
          all                 the four scenarios, in that order

        Options:
          --rows N         seed rows in the table (default 200000 for migrate-under-load,
                           50000 for crash, 20000 for faults)
          --writers N      writer threads (default 8)
          --tasks N        async writer tasks besides the threads (default 2)
          --duration S     seconds of load in migrate-under-load, half before and half after
                           the upgrade (default 10); seconds of load in sync (default 20)
          --kills N        child processes to kill in crash (default 50)
          --max-faults N   fault runs in faults; sampled when the upgrade does more I/O (default 40)
          --devices N      devices in sync, over its 3 accounts (default 8, at least 3)
          --postgres URL   the sync server's store in PostgreSQL instead of an SQLite file
          --seed N         the seed of every random choice (default: random, printed)
          --pool           migrate-under-load through a DatabasePool, with 2 reader threads checking
                           that every read sees the schema of a committed step
          --online         migrate-under-load and crash: prepareMigration copies the rebuilt table
                           while the writers write, then startMigration only swaps it in
          --quick          short CI profile: small tables, 4 writers, 2 s of load, 20 kills, 24 faults;
                           sync: 6 devices, 4 s of load
          --json FILE      write the figures and verdicts as JSON
          --svg FILE       draw write latency over time as SVG, upgrade shaded (migrate-under-load);
                           sync alone: sync latency over time, kills and restarts marked
          -h, --help       show this message

        Exit status: 0 when every invariant holds, 1 when one fails, 2 for a bad command line.
        """
}
