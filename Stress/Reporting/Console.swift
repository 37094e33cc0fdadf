import Foundation

/// All the harness's output goes through here, unbuffered, so that the live progress line and
/// the summary lines never overtake each other.
enum Console {
    /// Whether standard output is a terminal: only then is a live progress line drawn.
    static let isTerminal = isatty(1) == 1

    /// Prints one line on standard output.
    static func line(_ text: String = "") {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// Prints one line on standard error.
    static func error(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    /// Replaces the current terminal line (the progress line) by `text`.
    static func status(_ text: String) {
        FileHandle.standardOutput.write(Data(("\r\u{1B}[2K" + text).utf8))
    }
}
