import SerialDBSyncWire
import Testing

/// The rule every store decides a mutation by, and the record every store keeps of it.
@Suite("The upload rule")
struct UploadRuleTests {
    private let live = SyncEncodedChange(version: 40, deleted: false, rowJSON: #"{"id":"a","t":"x"}"#)
    private let tombstone = SyncEncodedChange(version: 44, deleted: true, rowJSON: #"{"id":"a"}"#)

    @Test("a base version equal to the key's current one applies; any other is a conflict showing the key's state")
    func baseVersions() {
        #expect(SyncUploadRule.conflict(baseVersion: 40, current: live, keyJSON: "{}") == nil)
        #expect(SyncUploadRule.conflict(baseVersion: 39, current: live, keyJSON: "{}") == .conflict(current: live))
        #expect(SyncUploadRule.conflict(baseVersion: 0, current: live, keyJSON: "{}") == .conflict(current: live))
        // A new key is based on 0; its conflict shows version 0, deleted, and the key.
        #expect(SyncUploadRule.conflict(baseVersion: 0, current: nil, keyJSON: #"{"id":"a"}"#) == nil)
        #expect(
            SyncUploadRule.conflict(baseVersion: 3, current: nil, keyJSON: #"{"id":"a"}"#)
                == .conflict(current: SyncEncodedChange(version: 0, deleted: true, rowJSON: #"{"id":"a"}"#)))
        // A deleted key is new again: re-inserting it is based on 0, not on the tombstone's version.
        #expect(SyncUploadRule.conflict(baseVersion: 0, current: tombstone, keyJSON: "{}") == nil)
        #expect(
            SyncUploadRule.conflict(baseVersion: 44, current: tombstone, keyJSON: "{}") == .conflict(current: tombstone)
        )
        // No base version: an administrative load writes whatever is there.
        #expect(SyncUploadRule.conflict(baseVersion: nil, current: live, keyJSON: "{}") == nil)
    }

    @Test(
        "a remembered result is answered again; an expired one at or below the mark is a duplicate; a new seq is decided"
    )
    func earlierAnswers() {
        #expect(
            SyncUploadRule.earlierAnswer(remembered: .applied(version: 3), seq: 9, highestAnswered: 2)
                == .applied(version: 3))
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 5, highestAnswered: 5) == .duplicate)
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 1, highestAnswered: 5) == .duplicate)
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 6, highestAnswered: 5) == nil)
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 1, highestAnswered: 0) == nil)
        // No seq answered yet: a first seq of 0 is new, not at or below a mark of 0.
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 0, highestAnswered: nil) == nil)
        #expect(SyncUploadRule.earlierAnswer(remembered: nil, seq: 0, highestAnswered: 0) == .duplicate)
    }

    @Test("every outcome but a duplicate is recorded and read back the same; a record missing its columns is refused")
    func records() throws {
        for outcome in [
            SyncUploadOutcome.applied(version: 7), .conflict(current: live), .rejected(message: "no\u{0}ü"),
        ] {
            let record = try #require(outcome.record)
            #expect(try SyncUploadOutcome(record: record) == outcome)
        }
        #expect(SyncUploadOutcome.duplicate.record == nil)
        #expect(throws: WireFormatError.self) {
            try SyncUploadOutcome(record: .init(status: "conflict", version: 1, deleted: nil, row: nil, message: nil))
        }
        #expect(throws: WireFormatError.self) {
            try SyncUploadOutcome(record: .init(status: "maybe", version: 1, deleted: nil, row: nil, message: nil))
        }
    }
}
