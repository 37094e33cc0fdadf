import Foundation

/// The configuration a ``SyncService`` serves, replaced whole by a reload, and the gate that
/// keeps a reload's change of table definitions apart from the requests that write under them.
///
/// A request keeps the configuration it started with (its snapshot) for its whole life. A
/// reload waits for the requests being handled, adopts the new definitions in the store, and
/// swaps the configuration, while requests about to be handled wait. A request whose snapshot
/// predates a change of table definitions is handled under the new configuration instead: the
/// store now holds its rows in the new definitions, and a row validated against the old ones
/// could reach devices that cannot apply it.
final class ServedConfiguration: @unchecked Sendable {
    // Safe to share: every field is read and written with `condition` locked.
    private let condition = NSCondition()
    private var current: SyncServerConfiguration
    /// Requests being handled.
    private var handling = 0
    /// Whether a reload holds the gate or waits for it; requests wait while it does.
    private var reloading = false

    init(_ configuration: SyncServerConfiguration) {
        current = configuration
    }

    /// The configuration now: what a request that starts now keeps.
    var snapshot: SyncServerConfiguration {
        condition.withLock { current }
    }

    /// Runs `body` with `snapshot`, or with the current configuration when a reload changed the
    /// table definitions since `snapshot` was taken; no reload replaces the configuration
    /// while `body` runs.
    func handle<Result>(
        with snapshot: SyncServerConfiguration, _ body: (SyncServerConfiguration) throws -> Result
    ) rethrows -> Result {
        let serving: SyncServerConfiguration = condition.withLock {
            while reloading { condition.wait() }
            handling += 1
            return snapshot.hasSameDefinitions(as: current) ? snapshot : current
        }
        defer {
            condition.withLock {
                handling -= 1
                if handling == 0 { condition.broadcast() }
            }
        }
        return try body(serving)
    }

    /// Waits for the requests being handled (holding back new ones), then makes what `build`
    /// returns from the current configuration the new one; when `build` throws, the current one stays.
    func replace(_ build: (SyncServerConfiguration) throws -> SyncServerConfiguration) throws {
        let old: SyncServerConfiguration = condition.withLock {
            while reloading { condition.wait() }
            reloading = true
            while handling > 0 { condition.wait() }
            return current
        }
        defer {
            condition.withLock {
                reloading = false
                condition.broadcast()
            }
        }
        let new = try build(old)
        condition.withLock { current = new }
    }
}
