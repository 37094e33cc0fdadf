/// One timed run of one side of a workload: how long the measured part took, and what it
/// produced (checked against the workload's expected ``Digest`` before the time is kept).
struct SideRun {
    var elapsed: Duration
    var digest: Digest
}
