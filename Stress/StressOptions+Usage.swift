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
          all                 the three scenarios, in that order

        Options:
          --rows N         seed rows in the table (default 200000 for migrate-under-load,
                           50000 for crash, 20000 for faults)
          --writers N      writer threads (default 8)
          --tasks N        async writer tasks besides the threads (default 2)
          --duration S     seconds of load in migrate-under-load, half before and half after
                           the upgrade (default 10)
          --kills N        child processes to kill in crash (default 50)
          --max-faults N   fault runs in faults; sampled when the upgrade does more I/O (default 40)
          --seed N         the seed of every random choice (default: random, printed)
          --pool           migrate-under-load through a DatabasePool, with 2 reader threads checking
                           that every read sees the schema of a committed step
          --quick          short CI profile: small tables, 4 writers, 2 s of load, 20 kills, 24 faults
          --json FILE      write the figures and verdicts as JSON
          --svg FILE       draw write latency over time as SVG, upgrade shaded (migrate-under-load)
          -h, --help       show this message

        Exit status: 0 when every invariant holds, 1 when one fails, 2 for a bad command line.
        """
}
