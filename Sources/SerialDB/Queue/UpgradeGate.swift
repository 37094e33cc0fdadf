/// Whether work may run, must wait for an upgrade, or is refused: the one gate of a queue and
/// of a pool's readers. A value guarded by its owner's lock (the serializer's connection lock,
/// the reader pool's condition); every method is called holding it.
///
/// **States.**
/// - *open*: work runs once every upgrade submitted before it has finished.
/// - *failed*: the last upgrade to finish failed. Work submitted after that upgrade is
///   refused with the upgrade's error (``SerialDBError/Code/migrationFailed``), instead of
///   running against a half-upgraded schema, until an upgrade submitted after the failed one
///   succeeds; work submitted before the failed upgrade keeps its place and runs. A second
///   failure keeps refusing what the first refused, with the latest error.
/// - *closed*: every later decision refuses with the owner's `closed` error; nothing reopens it,
///   and an upgrade that finishes after the close changes nothing.
///
/// **Order.** Work and upgrades take numbered places in one line: a ``Ticket`` taken when the
/// work is submitted. A ticket waits while an upgrade with an earlier ticket is pending, and is
/// refused by a failed upgrade with an earlier ticket: so work submitted after
/// `startMigration` never sees the schema half-upgraded, and work submitted before it is
/// neither held nor refused by it.
struct UpgradeGate {
    /// A place in line: a later ticket was taken later.
    struct Ticket: Comparable, Sendable {
        fileprivate let number: UInt64

        static func < (lhs: Ticket, rhs: Ticket) -> Bool { lhs.number < rhs.number }
    }

    /// What the gate says about a piece of work. No payload: inlined into the reader pool's
    /// check-out, a decision is only switched on, never built; a refusal's error is ``refusal``.
    enum Decision {
        /// Every upgrade before it finished and none of them failed last: run.
        case run
        /// An upgrade submitted before it is still pending: wait for its `upgradeFinished`.
        case wait
        /// Refused, with ``refusal``: the gate is closed, or an upgrade submitted before it failed.
        case refused
    }

    // The states as plain fields rather than one enum with a payload: the hot paths test a
    // `Bool` and an optional, which costs fewer instructions than finding an enum's case.
    /// *closed*, for good.
    private(set) var isClosed = false
    /// *failed*: the error and the ticket of the failed upgrade that refuses later tickets.
    private var failure: (error: SerialDBError, ticket: Ticket)?
    private var lastTicket = Ticket(number: 0)
    /// Tickets of upgrades submitted and not finished, oldest first (almost always 0 or 1).
    private var pendingUpgrades: [Ticket] = []
    /// What a closed gate refuses with: the queue's or the pool's own message.
    private let closedError: SerialDBError

    init(closedError: SerialDBError) {
        self.closedError = closedError
    }

    /// Takes the next place in line for a piece of work.
    mutating func takeTicket() -> Ticket {
        lastTicket = Ticket(number: lastTicket.number + 1)
        return lastTicket
    }

    /// Takes the next place in line for an upgrade: every ticket taken from now on waits until
    /// ``upgradeFinished(_:error:)`` with the returned ticket.
    mutating func upgradeSubmitted() -> Ticket {
        let ticket = takeTicket()
        pendingUpgrades.append(ticket)
        return ticket
    }

    /// The upgrade `ticket` finished: with an `error`, work submitted after it is refused with
    /// that error until a later upgrade succeeds; without, an earlier failure is forgotten.
    mutating func upgradeFinished(_ ticket: Ticket, error: SerialDBError?) {
        pendingUpgrades.removeAll { $0 == ticket }
        if let error {
            // Work submitted after an earlier failure stays refused: no upgrade since it has
            // succeeded. It throws the latest error, as the serializer's blocks do.
            failure = (error, min(failure?.ticket ?? ticket, ticket))
        } else if let failed = failure?.ticket, failed < ticket {
            failure = nil
        }
    }

    /// Closes the gate for good.
    mutating func close() {
        isClosed = true
    }

    /// Whether the work with `ticket` may run now. Inlined: the reader pool asks it on every
    /// check-out.
    @inline(__always)
    func decision(for ticket: Ticket) -> Decision {
        if isClosed { return .refused }
        if let oldest = pendingUpgrades.first, oldest < ticket { return .wait }
        if let failed = failure?.ticket, failed < ticket { return .refused }
        return .run
    }

    /// Whether work that comes after every finished upgrade, while none is pending, is refused:
    /// the serializer's question. Its line runs one job at a time in submission order, so when
    /// a block's turn comes every upgrade submitted before it has finished and no other is
    /// running: the serializer need not number its blocks, and its hot path only tests the
    /// state.
    @inline(__always)
    var refusesWorkAfterEveryFinishedUpgrade: Bool {
        isClosed || failure != nil
    }

    /// The error refused work throws: the close's, else the failed upgrade's.
    var refusal: SerialDBError {
        if !isClosed, let failure { return failure.error }
        return closedError
    }
}
