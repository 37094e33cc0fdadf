/// What the crash scenario knows about its file since the file was last reset to the seeded
/// copy: every write acknowledged since, the one write per writer that may have been in flight
/// at its kill, and the step the next child starts from.
struct CrashEpoch {
    private(set) var acknowledgements: [Acknowledgement] = []
    /// For each writer of the children since the reset: the sequence number after the last one
    /// it reported, which its kill may have caught committed but unacknowledged.
    private(set) var allowedInFlight: [Int: Int] = [:]
    var stepAtStart = 1

    /// Adds what a killed child reported.
    mutating func add(_ content: ChildTranscript.Content, generation: Int, writerCount: Int) {
        acknowledgements += content.acknowledgements
        for index in 0..<writerCount {
            let author = WriteOperation.author(generation: generation, index: index)
            allowedInFlight[author] = (content.lastReportedSeq[author] ?? 0) + 1
        }
    }
}
