import HarnessSupport

/// The in-memory sink: what every writer of a scenario saw, for the checker.
final class WriterLog: AcknowledgementSink {
    private let acknowledgements = Locked<[Acknowledgement]>([])
    private let failures = Locked<[WriteFailure]>([])
    private let control: LoadControl

    init(control: LoadControl) {
        self.control = control
    }

    func acknowledged(_ acknowledgement: Acknowledgement) {
        acknowledgements.withLock { $0.append(acknowledgement) }
        control.countAcknowledgement()
    }

    func failed(_ failure: WriteFailure) {
        failures.withLock { $0.append(failure) }
    }

    var allAcknowledgements: [Acknowledgement] { acknowledgements.withLock { $0 } }
    var allFailures: [WriteFailure] { failures.withLock { $0 } }
}
