import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import Testing

/// Uploaded values become column values by the declared column's affinity, as SQLite parsed
/// the CREATE TABLE; what does not fit is rejected with a message.
@Suite struct RowValidationTests {
    private func post(_ running: RunningSyncServer, _ rows: [String]) async throws -> [JSONValue] {
        let mutations = rows.enumerated().map { upsert($0.offset + 1, "item", $0.element) }
        let answer = try await running.alice.postData(client: UUID().uuidString, mutations)
        return try #require(answer["results"]?.arrayValue)
    }

    private func storedRow(_ running: RunningSyncServer, id: Int64) async throws -> JSONValue? {
        try await running.alice.fetchAll("item").changes.first { $0["row"]?["id"] == .integer(id) }?["row"]
    }

    @Test(arguments: SyncStoreKind.allCases)
    func leftOutColumnsTakeTheirDefaultsEvaluatedBySQLite(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        #expect(try await post(running, [#"{"id": 1}"#]).first?["status"] == .string("applied"))
        let row = try #require(try await storedRow(running, id: 1))
        #expect(row["label"] == .string("none"))
        #expect(row["created"]?.stringValue?.count == 19, "CURRENT_TIMESTAMP: YYYY-MM-DD HH:MM:SS")
        #expect(row["price"] == .null)
        #expect(row["data"] == .null)
        #expect(row["anything"] == .null)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func numbersAndStringsAreConvertedByAffinity(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let results = try await post(
            running,
            [
                #"{"id": 2.0, "label": "x", "price": 3, "amount": 2.5, "data": {"base64": "AQID"}, "anything": "free"}"#,
                #"{"id": 3, "label": "y", "amount": 3.0, "price": 1e-5, "anything": 7.25}"#,
                #"{"id": 9223372036854775807, "label": "max", "amount": -9223372036854775808}"#,
                #"{"id": 4, "label": "\"quotes\" \\ tab\t newline\n nul\u0001 é 🎉"}"#,
            ])
        #expect(results.map { $0["status"] } == Array(repeating: .string("applied"), count: 4))
        let two = try #require(try await storedRow(running, id: 2))
        #expect(two["price"] == .number(3.0), "REAL keeps a fraction part")
        #expect(two["amount"] == .number(2.5))
        #expect(two["data"] == .object(["base64": .string("AQID")]))
        #expect(two["anything"] == .string("free"))
        let three = try #require(try await storedRow(running, id: 3))
        #expect(three["amount"] == .integer(3), "NUMERIC stores 3.0 as the integer 3, as SQLite does")
        #expect(three["price"] == .number(1e-5))
        #expect(three["anything"] == .number(7.25))
        let max = try #require(try await storedRow(running, id: .max))
        #expect(max["amount"] == .integer(.min))
        let four = try #require(try await storedRow(running, id: 4))
        #expect(four["label"] == .string("\"quotes\" \\ tab\t newline\n nul\u{1} é 🎉"))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func valuesOfTheWrongTypeAreRejectedWithTheColumnName(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let results = try await post(
            running,
            [
                #"{"id": 1.5}"#,
                #"{"id": "5"}"#,
                #"{"id": 6, "price": "1.0"}"#,
                #"{"id": 7, "label": 3}"#,
                #"{"id": 8, "data": {"base64": "not base64!"}}"#,
                #"{"id": 9, "price": {"base64": "AA=="}}"#,
                #"{"id": 10, "amount": false}"#,
                #"{"id": 11, "label": null}"#,
            ])
        #expect(results.map { $0["status"] } == Array(repeating: .string("rejected"), count: 8))
        let messages = results.compactMap { $0["error"]?.stringValue }
        #expect(messages[0] == #"column "id" is INTEGER and takes whole numbers, not 1.5"#)
        #expect(messages[1] == #"column "id" is INTEGER and takes numbers, not strings"#)
        #expect(messages[2].contains(#""price""#))
        #expect(messages[3] == #"column "label" is TEXT and takes strings, not numbers"#)
        #expect(messages[4].contains("base64"))
        #expect(messages[7] == #"column "label" is NOT NULL"#)
        #expect(try await running.alice.fetchAll("item").changes.isEmpty)
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aDeleteNamesExactlyTheKeyColumns(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let answer = try await running.alice.postData(
            client: "d",
            [
                delete(1, "pair", #"{"a": "x"}"#, base: 0),
                delete(2, "pair", #"{"a": "x", "b": {"base64": "AA=="}, "value": 1}"#, base: 0),
                delete(3, "pair", #"{"a": "x", "b": "not a blob but BLOB affinity takes text"}"#, base: 0),
            ])
        let statuses = answer["results"]?.arrayValue?.map { $0["status"] }
        #expect(statuses == [.string("rejected"), .string("rejected"), .string("applied")])
    }
}
