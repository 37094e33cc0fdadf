import Foundation
import SerialDBSyncServer
import SerialDBSyncWire
import Testing

/// What a table's definition declares beyond types holds for every row the server applies, as
/// SQLite on a device would hold it: CHECK for complete and defaulted rows alike, UNIQUE across
/// an account's rows with the declared collations, no infinity, and column names folded in
/// ASCII only.
@Suite struct ConstraintTests {
    private func post(
        _ running: RunningSyncServer, _ table: String, _ rows: [String], client: String = UUID().uuidString,
        firstSeq: Int = 1
    ) async throws -> [JSONValue] {
        let mutations = rows.enumerated().map { upsert(firstSeq + $0.offset, table, $0.element) }
        let answer = try await running.alice.postData(client: client, mutations)
        #expect(answer.status == 200, "\(answer.json)")
        return try #require(answer["results"]?.arrayValue)
    }

    private func ids(_ running: RunningSyncServer, _ table: String) async throws -> [JSONValue?] {
        try await running.alice.fetchAll(table).changes.filter { $0["deleted"] == .bool(false) }.map {
            $0["row"]?["id"]
        }
    }

    @Test(arguments: SyncStoreKind.allCases)
    func checkConstraintsHoldForCompleteRowsAsForDefaultedOnes(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, configuration: try SyncFixtures.constrained())
        defer { try? running.stop() }
        let results = try await post(
            running, "counted",
            [
                #"{"id": 1, "n": -1, "label": "y"}"#, #"{"id": 2, "n": -1}"#, #"{"id": 3}"#,
                #"{"id": 4, "n": 7, "label": "z"}"#,
            ])
        #expect(results.map { $0["status"] } == ["rejected", "rejected", "applied", "applied"].map { .string($0) })
        for rejected in results.prefix(2) {
            #expect(rejected["error"]?.stringValue?.contains("CHECK constraint failed: n >= 0") == true, "\(rejected)")
        }
        #expect(try await ids(running, "counted") == [.integer(3), .integer(4)])
    }

    @Test(arguments: SyncStoreKind.allCases)
    func uniqueConstraintsHoldAcrossAnAccountsRowsWithTheirCollations(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, configuration: try SyncFixtures.constrained())
        defer { try? running.stop() }
        let first = try await post(
            running, "person",
            [
                #"{"id": 1, "email": "ann@x.org", "nick": "ann"}"#,
                #"{"id": 2, "email": "ANN@X.ORG"}"#,  // NOCASE folds ASCII
                #"{"id": 3, "email": "\u212Aate@x.org"}"#,  // the Kelvin sign is not k for SQLite
                #"{"id": 4, "email": "kate@x.org"}"#,
                #"{"id": 5, "nick": "ann"}"#,
                #"{"id": 6, "nick": "Ann"}"#,  // BINARY
                #"{"id": 7, "code": "c ", "score": 1}"#,
                #"{"id": 8, "code": "c", "score": 1.0}"#,  // RTRIM, and 1 = 1.0
                #"{"id": 9, "code": "c", "score": 2}"#,
                #"{"id": 10}"#, #"{"id": 11}"#,  // NULLs never collide
            ], client: "c1")
        #expect(
            first.map { $0["status"]?.stringValue }
                == [
                    "applied", "rejected", "applied", "applied", "rejected", "applied", "applied", "rejected",
                    "applied", "applied", "applied",
                ])
        #expect(first[1]["error"] == .string("UNIQUE constraint failed: person.email"))
        #expect(first[4]["error"] == .string("UNIQUE constraint failed: person.nick"))
        #expect(first[7]["error"] == .string("UNIQUE constraint failed: person.code, person.score"))

        let bob = try await running.bob.postData(
            client: "b", [upsert(1, "person", #"{"id": 2, "email": "ann@x.org", "nick": "ann"}"#)])
        #expect(bob["results"]?[0]?["status"] == .string("applied"), "another account's rows do not count")
        let last = try #require(bob["results"]?[0]?["version"]?.integerValue)
        let v1 = try #require(first[0]["version"]?.integerValue)
        let v4 = try #require(first[3]["version"]?.integerValue)

        // Within one upload: a row keeps its own value, gives it up, and another key takes it;
        // a delete frees its values.
        let second = try await running.alice.postData(
            client: "c1",
            [
                upsert(12, "person", #"{"id": 1, "email": "Ann@x.org", "nick": "ann"}"#, base: v1),
                upsert(13, "person", #"{"id": 1, "email": "bea@x.org", "nick": "ann"}"#, base: last + 1),
                upsert(14, "person", #"{"id": 2, "email": "ann@x.org"}"#),
                delete(15, "person", #"{"id": 4}"#, base: v4),
                upsert(16, "person", #"{"id": 12, "email": "KATE@x.org"}"#),
                upsert(17, "person", #"{"id": 13, "email": "BEA@x.org"}"#),
                upsert(18, "person", #"{"id": 14, "nick": "ann"}"#),
            ])
        #expect(
            second["results"]?.arrayValue?.map { $0["status"]?.stringValue }
                == ["applied", "applied", "applied", "applied", "applied", "rejected", "rejected"],
            "\(second.json)")
        let rows = try await running.alice.fetchAll("person").changes.filter { $0["deleted"] == .bool(false) }
        // As bytes: Swift's == takes the Kelvin sign for K.
        let emails = rows.compactMap { $0["row"]?["email"]?.stringValue }.map { Array($0.utf8) }.sorted {
            $0.lexicographicallyPrecedes($1)
        }
        #expect(emails == ["KATE@x.org", "ann@x.org", "bea@x.org", "\u{212A}ate@x.org"].map { Array($0.utf8) })
    }

    @Test(arguments: SyncStoreKind.allCases)
    func uniqueValuesLongerThanAnIndexEntryAreComparedWhole(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, configuration: try SyncFixtures.constrained())
        defer { try? running.stop() }
        // Hex of a pseudo-random sequence: PostgreSQL compresses repetitive text below its index limit.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let long = (0..<500).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return String(state >> 1, radix: 16)
        }.joined(separator: "é")
        let results = try await post(
            running, "person",
            [
                #"{"id": 1, "email": "\#(long)a"}"#, #"{"id": 2, "email": "\#(long)b"}"#,
                #"{"id": 3, "email": "\#(long)A"}"#,
            ])
        #expect(results.map { $0["status"] } == [.string("applied"), .string("applied"), .string("rejected")])
        #expect(results[2]["error"] == .string("UNIQUE constraint failed: person.email"))
    }

    @Test(arguments: SyncStoreKind.allCases)
    func aRowThatWouldHoldInfinityIsRejectedAndFetchesStayJSON(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, configuration: try SyncFixtures.constrained())
        defer { try? running.stop() }
        // The DEFAULT of unit.r is finite when the server starts and infinite once a row was tried.
        let results = try await post(running, "unit", [#"{"id": 1}"#, #"{"id": 2, "r": 1.5}"#])
        #expect(results.map { $0["status"] } == [.string("rejected"), .string("applied")])
        #expect(results[0]["error"]?.stringValue?.contains("JSON cannot carry") == true, "\(results[0])")
        let page = try await running.alice.fetchData("unit", since: 0)
        #expect(page.status == 200)
        #expect(page["changes"]?.arrayValue?.map { $0["row"]?["r"] } == [.number(1.5)])
    }

    @Test(arguments: [SyncStoreKind.sqliteMemory])
    func columnNamesFoldInASCIIOnlyAsSQLiteFoldsThem(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind, configuration: try SyncFixtures.constrained())
        defer { try? running.stop() }
        let results = try await post(
            running, "unit", [#"{"id": 3, "\u212A": "kelvin", "r": 0}"#, #"{"ID": 4, "K": "upper", "R": 0}"#])
        #expect(results.map { $0["status"] } == [.string("rejected"), .string("applied")])
        #expect(results[0]["error"]?.stringValue?.contains("which table \"unit\" does not have") == true)
        #expect(try await running.alice.fetchAll("unit").changes.first?["row"]?["k"] == .string("upper"))
    }
}
