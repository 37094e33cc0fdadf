import Foundation

/// The crash child's sink: one line on standard output per outcome, written after the write
/// call returned. Each line goes out in a single write(2) of less than PIPE_BUF bytes, so lines
/// from several threads never interleave, and a line the parent reads was really printed
/// before the kill.
struct ChildOutput: AcknowledgementSink {
    func acknowledged(_ acknowledgement: Acknowledgement) {
        line(acknowledgement.line)
    }

    func failed(_ failure: WriteFailure) {
        line(String(failure.line.prefix(1_000)))
    }

    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
