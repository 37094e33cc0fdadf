/// How a server decides one mutation of an upload, the same in every store: first whether it
/// was answered before (idempotency), then whether its base version still holds (conflict).
/// What remains (validation, unique values, writing the row under the next version) is the
/// store's.
///
/// ```swift
/// if let answer = SyncUploadRule.earlierAnswer(remembered: stored, seq: 7, highestAnswered: 9) { return answer }
/// if let conflict = SyncUploadRule.conflict(baseVersion: 40, current: state, keyJSON: #"{"id":"a1"}"#) { return conflict }
/// // write the row under the next version: .applied(version: next)
/// ```
public enum SyncUploadRule {
    /// The answer a mutation gets without being decided again, or `nil` when it is new.
    ///
    /// - Parameters:
    ///   - remembered: the result recorded for its (account, client id, seq), if any.
    ///   - seq: its seq.
    ///   - highestAnswered: the highest seq answered for its (account, client id), `nil` when
    ///     none was (a client's first seq may be 0: that is not "0 answered").
    /// - Returns: the remembered result; ``SyncUploadOutcome/duplicate`` for a seq at or below
    ///   the highest one answered whose result expired; `nil` otherwise.
    public static func earlierAnswer(remembered: SyncUploadOutcome?, seq: Int64, highestAnswered: Int64?)
        -> SyncUploadOutcome?
    {
        if let remembered { return remembered }
        return wasAnswered(seq, highestAnswered: highestAnswered) ? .duplicate : nil
    }

    /// Whether `seq` is at or below the highest seq answered for its client (`nil`: none was):
    /// only such a seq can have a result recorded, or have had one.
    public static func wasAnswered(_ seq: Int64, highestAnswered: Int64?) -> Bool {
        guard let highestAnswered else { return false }
        return seq <= highestAnswered
    }

    /// The version a key's base version must equal: its current version, or 0 when it was
    /// never stored or is deleted (re-inserting a deleted key is based on version 0).
    public static func currentBase(of current: SyncEncodedChange?) -> Int64 {
        guard let current, !current.deleted else { return 0 }
        return current.version
    }

    /// The conflict a mutation meets, or `nil` when it may be written.
    ///
    /// - Parameters:
    ///   - baseVersion: the version the client last saw for the key; `nil` writes whatever the
    ///     key holds (administrative loads, never a client's upload).
    ///   - current: the key's state in the store (including earlier mutations of the same
    ///     upload), `nil` when it was never stored.
    ///   - keyJSON: the key columns as a JSON object: the row of a key that was never stored.
    /// - Returns: ``SyncUploadOutcome/conflict(current:)`` with the key's state (version 0 and
    ///   deleted for a key never stored) when `baseVersion` is not ``currentBase(of:)``.
    public static func conflict(baseVersion: Int64?, current: SyncEncodedChange?, keyJSON: String)
        -> SyncUploadOutcome?
    {
        guard let baseVersion, baseVersion != currentBase(of: current) else { return nil }
        return .conflict(current: current ?? SyncEncodedChange(version: 0, deleted: true, rowJSON: keyJSON))
    }
}
