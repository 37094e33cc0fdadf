/// The fetch of one table's rows, as a state machine driven by the server's fetch-data answers
/// and nothing else: it says which request to send next and what to do with each answer, and
/// never touches a database or a transport, so every path is tested by feeding it answers.
///
/// - ``Phase/incremental``: from the stored cursor, pages until one says no more follow.
/// - ``Phase/refetch``: from 0 after the table's definition changed (or on a first fetch):
///   rows already known at the same version are written again, so that new columns get the
///   server's values.
/// - ``Phase/resync``: the server said `"resync"` (the cursor fell below its purge floor), or
///   a resync interrupted earlier resumes from its stored cursor. Every page says
///   `"resyncing": true`, its keys are remembered, and after the last page the local rows the
///   resync did not see are deleted, except rows with unsent changes.
///
/// The caller makes each ``Action`` durable (one transaction per page, with the cursor) before
/// it sends the next request, so an interruption anywhere resumes where the last committed
/// page left off.
struct TableFetch: Sendable, Equatable {
    /// What the fetch is doing.
    enum Phase: Sendable, Equatable {
        case incremental
        case refetch
        case resync
        /// The last page has been answered.
        case finished
    }

    /// What to do with an answer, before sending ``nextRequest``.
    enum Action: Sendable, Equatable {
        /// Record durably that a resync of the table begins: cursor 0, no key seen yet.
        case beginResync
        /// Apply the page and store its cursor, in one transaction.
        case apply(PageApplication)
    }

    /// How one page is applied.
    struct PageApplication: Sendable, Equatable {
        /// The answer, its cursor included (its changes may be left out: ``changes`` holds
        /// them).
        var page: FetchDataResponse
        /// The page's changes, once read: the client reads them after it has sent the request
        /// for the next page.
        var changes = PageChanges()
        /// Rows known at the page's version are written again (a fetch from 0).
        var rewritesKnownRows: Bool
        /// The page's keys are remembered as seen by the resync.
        var recordsSeenKeys: Bool
        /// After the page: delete the local rows the resync did not see, except unsent ones.
        var finishesResync: Bool
    }

    /// The server's cap on a page: the size of a resync's pages until the server has shown it
    /// honours `"resyncing"`.
    static let largestPage = SyncLimits.maximumPageSize

    /// The table fetched.
    let table: String
    /// Rows per page asked for.
    let pageSize: Int
    private(set) var phase: Phase
    /// The cursor the next request starts from.
    private(set) var since: Int64
    /// An answer said `"floor"`: the server speaks protocol 1.1 and never tells a page that
    /// says `"resyncing"` to resync, so a resync may use pages of any size. A server that
    /// predates it compares every cursor above 0 with its floor; pages of ``largestPage`` get
    /// a resync past the floor unless that many changes lie below it.
    private(set) var serverHonorsResyncing = false

    /// A fetch from the table's stored cursor; `resyncInProgress` when a resync of it was
    /// interrupted, which then resumes from that cursor.
    init(table: String, cursor: Int64, resyncInProgress: Bool, pageSize: Int) {
        self.table = table
        self.pageSize = pageSize
        since = cursor
        phase = resyncInProgress ? .resync : (cursor == 0 ? .refetch : .incremental)
    }

    /// The request to send, or `nil` once the fetch is finished.
    var nextRequest: FetchDataRequest? {
        switch phase {
        case .finished:
            return nil
        case .resync:
            return FetchDataRequest(
                table: table, since: since, limit: serverHonorsResyncing ? pageSize : Self.largestPage,
                resyncing: true)
        case .incremental, .refetch:
            return FetchDataRequest(table: table, since: since, limit: pageSize)
        }
    }

    /// Takes the answer to ``nextRequest`` and moves on.
    ///
    /// - Throws: ``SyncError/Code/invalidResponse`` for an answer the protocol does not allow:
    ///   rows of another table, "more follow" without a cursor that moved, "resync" to a fetch
    ///   from 0 or to a page of a resync (the limit of a server that predates "resyncing").
    mutating func receive(_ page: FetchDataResponse) throws -> Action {
        guard phase != .finished else {
            throw SyncError(.invalidResponse, "The fetch of \(table) is finished; no answer was expected.")
        }
        if page.floor != nil { serverHonorsResyncing = true }
        if page.resync {
            guard phase != .resync else {
                throw SyncError(
                    .invalidResponse,
                    serverHonorsResyncing
                        ? "The server asked to resync \(table) in answer to a page of its resync, which the "
                            + "protocol does not allow; the resync goes on from the same page with the next sync."
                        : "The server asked to resync \(table) again while fetching it from 0: \(Self.largestPage) "
                            + "or more of its changes lie below the server's tombstone purge floor, so its "
                            + "pages cannot get past it. Purge tombstones less far on the server.")
            }
            guard since > 0 else {
                throw SyncError(
                    .invalidResponse, "The server asked to resync \(table) in answer to a fetch from 0.")
            }
            phase = .resync
            since = 0
            return .beginResync
        }
        guard page.table == table else {
            throw SyncError(.invalidResponse, "Asked for rows of \(table), the server sent rows of \(page.table).")
        }
        if page.hasMore && page.version <= since {
            throw SyncError(
                .invalidResponse, "The server said more rows of \(table) follow but did not move the cursor.")
        }
        let resyncing = phase == .resync
        let application = PageApplication(
            page: page, rewritesKnownRows: phase == .refetch || resyncing, recordsSeenKeys: resyncing,
            finishesResync: resyncing && !page.hasMore)
        if page.hasMore {
            since = page.version
        } else {
            phase = .finished
        }
        return .apply(application)
    }
}
