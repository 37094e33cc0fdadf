import SerialDBSyncWire
import Testing

/// A post-data request built with its mutations' wire forms (a client's outbox keeps them for
/// retries) sends those forms as they are, and never once its mutations changed.
@Suite("Post-data requests with encoded mutations")
struct EncodedMutationTests {
    static let mutations = [
        SyncMutation(
            seq: 7, table: "note", op: .upsert, row: ["id": .text("a\u{0}ü"), "n": .integer(1)], key: nil,
            baseVersion: 0),
        SyncMutation(seq: 8, table: "note", op: .delete, row: nil, key: ["id": .text("b")], baseVersion: 3),
    ]

    private func encoded(_ mutation: SyncMutation) throws -> String {
        var writer = JSONWriter()
        try mutation.write(to: &writer)
        return writer.string
    }

    @Test("the encoded forms are what is sent, and read back as the mutations")
    func encodedFormsAreSent() throws {
        let plain = PostDataRequest(clientID: "device", mutations: Self.mutations)
        let forms = try Self.mutations.map(encoded)
        let request = PostDataRequest(clientID: "device", mutations: Self.mutations, encodedMutations: forms)
        #expect(try request.jsonBytes() == plain.jsonBytes())
        #expect(try PostDataRequest(jsonBytes: request.jsonBytes()) == plain)
        // Members in another order than the writer's: the given text travels, not a new encoding.
        let reordered = #"{"base_version":3,"key":{"id":"b"},"op":"delete","table":"note","seq":8}"#
        let kept = PostDataRequest(
            clientID: "device", mutations: Self.mutations, encodedMutations: [forms[0], reordered])
        let text = String(decoding: try kept.jsonBytes(), as: UTF8.self)
        #expect(text.contains(reordered))
        #expect(try PostDataRequest(jsonBytes: kept.jsonBytes()) == plain)
        #expect(kept == plain, "requests are equal by their mutations, whatever their encoded forms")
    }

    @Test("changing the mutations drops the encoded forms")
    func changedMutationsAreEncodedAgain() throws {
        var request = PostDataRequest(
            clientID: "device", mutations: Self.mutations, encodedMutations: try Self.mutations.map(encoded))
        request.mutations[1].baseVersion = 99
        let read = try PostDataRequest(jsonBytes: request.jsonBytes())
        #expect(read.mutations[1].baseVersion == 99)
        request.mutations.removeAll()
        #expect(try PostDataRequest(jsonBytes: request.jsonBytes()).mutations.isEmpty)
    }
}
