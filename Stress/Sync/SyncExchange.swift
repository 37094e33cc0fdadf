/// A fixed exchange between two devices of one account, played after the load with nothing
/// else running: each server-side ``SyncBreak`` damages it, whatever the timing did.
///
/// The random load damages rows only when two devices of an account happen to meet in the way
/// a break needs, and a loaded machine (fewer syncs, longer server restarts) can make that rare
/// enough that a broken run passes. This exchange makes each meeting happen once, in order:
/// a row one device deletes after the other fetched it (a server that forgets tombstones
/// leaves it on the other), a row both update from the same version (the second update is
/// stale: a conflict, which a server where the last writer wins applies instead), and two rows
/// the other device fetches in one page, the older one served for the first time behind a newer
/// one (a server that hands out cursors out of commit order holds it back while the cursor
/// passes it). A correct server settles all of it in the final syncs like any other change.
struct SyncExchange {
    /// Two devices that joined the account after the load, not synced yet.
    let first: SyncDevice
    let second: SyncDevice
    let timeline: SyncTimeline

    /// Plays the exchange.
    ///
    /// - Throws: `StressError` when a write or a sync fails: the server is up and nothing else
    ///   runs, so no failure is expected.
    func run() throws {
        try sync(first)
        try sync(second)
        let deleted = try first.insert()
        let contested = try first.insert()
        try sync(first)
        try sync(second)
        try first.delete(deleted)
        try first.update(contested)
        try sync(first)
        // Its base version is the one both fetched: stale since the first device's update.
        try second.update(contested)
        try sync(second)
        // The first device's own fetches serve each of them as the newest change of a page; the
        // second device then fetches both in one page, where the older one is not the newest
        // for the first time.
        _ = try first.insert()
        try sync(first)
        _ = try first.insert()
        try sync(first)
        try sync(second)
    }

    private func sync(_ device: SyncDevice) throws {
        switch device.sync() {
        case .success(let report):
            timeline.rejected(report.rejected.count)
        case .failure(let error):
            throw StressError("a sync of \(device.name) in the fixed exchange failed: \(error)")
        }
    }
}
