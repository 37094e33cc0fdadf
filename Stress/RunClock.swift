import Dispatch

/// Monotonic seconds since the clock was made: one clock per scenario, so that every time stamp
/// of a run (submissions, returns, upgrade phases) is on the same axis.
struct RunClock: Sendable {
    private let origin = DispatchTime.now().uptimeNanoseconds

    /// Seconds elapsed since the clock was made.
    var now: Double {
        Double(DispatchTime.now().uptimeNanoseconds - origin) / 1e9
    }
}
