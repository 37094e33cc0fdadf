/// A deliberately broken client or server (`--break MODE`), implemented in the harness and
/// never in the library, to show that the sync scenario's checks catch each kind of bug.
enum SyncBreak: String, Sendable, CaseIterable {
    /// The first device writes with the outbox triggers quiet, as if its client skipped the
    /// outbox: its changes never go up, and the run must report them lost.
    case skipOutbox = "skip-outbox"
    /// The server leaves deletes out of every fetch: other devices keep deleted rows.
    case forgetTombstones = "forget-tombstones"
    /// The server serves a change only after a newer one moved the cursor past it, as a store
    /// that numbers changes when a transaction starts, not when it commits, would.
    case cursorOrder = "cursor-order"
    /// The server applies every upload whatever its base version: the last writer wins, and
    /// a stale update silently overwrites a newer one.
    case lastWriterWins = "last-writer-wins"

    /// Whether the server child implements it (the others are a device's).
    var isServerSide: Bool { self != .skipOutbox }
}
