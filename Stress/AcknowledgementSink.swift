/// Where a writer reports its outcomes: memory in the scenarios, standard output in the crash
/// child (the parent reads it).
protocol AcknowledgementSink: Sendable {
    /// Called after the write call returned without error.
    func acknowledged(_ acknowledgement: Acknowledgement)
    /// Called after the write call threw.
    func failed(_ failure: WriteFailure)
}
