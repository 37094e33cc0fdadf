import Foundation

/// A one-line progress bar on standard error, drawn only when it is a terminal.
final class ProgressBar {
    private let isTerminal = isatty(FileHandle.standardError.fileDescriptor) != 0
    private var lastPercent = -1

    func show(_ done: Int, of total: Int) {
        guard isTerminal, total > 0 else { return }
        let percent = done * 100 / total
        guard percent != lastPercent else { return }
        lastPercent = percent
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
        FileHandle.standardError.write(Data("\r[\(bar)] \(percent)% \(done)/\(total) rows".utf8))
    }

    func finish() {
        if isTerminal && lastPercent >= 0 { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
