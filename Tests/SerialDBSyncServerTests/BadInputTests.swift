import Foundation
import SerialDBSyncServer
import Testing

/// Input no client should send: each gets a 4xx (or a closed connection), and the server
/// answers the next good request as if nothing happened.
@Suite(.timeLimit(.minutes(5))) struct BadInputTests {
    @Test(arguments: SyncStoreKind.persistent)
    func badBodiesOfEveryKindGet400AndLeaveTheServerHealthy(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let start: [Data] = [
            Data([0xFF, 0xFE, 0x00, 0x01]),
            Data(#"{"table": "\#u{0}"}"#.utf8),
            Data([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]),
            Data(String(repeating: "[", count: 100_000).utf8),
            Data(String(repeating: "{\"a\":", count: 10_000).utf8),
            Data(#"{"table": "note", "since": 1e400}"#.utf8),
            Data(#"{"table": 99999999999999999999999, "since": 0}"#.utf8),
            Data(#"{"table": "note", "since": 0} trailing"#.utf8),
            Data(#"{"table": "note\ud800", "since": 0}"#.utf8),
            Data("null".utf8),
            Data("\"just a string\"".utf8),
            Data(#"{"table": true, "since": 0}"#.utf8),
        ]
        // A body every call accepts, but for one string member: lone surrogates, and invalid
        // UTF-8 (a lone continuation byte, overlong forms, an encoded surrogate, a cut sequence,
        // bytes no UTF-8 holds, a code point above U+10FFFF).
        func acceptable(_ junk: [UInt8]) -> Data {
            Data(#"{"tables": [], "table": "note", "since": 0, "client_id": "d", "mutations": [], "junk": ""#.utf8)
                + junk + Data(#""}"#.utf8)
        }
        let unacceptable: [[UInt8]] = [
            Array(#"\ud800"#.utf8), Array(#"\udc00"#.utf8), Array(#"\ud800\u0041"#.utf8), Array(#"\ud800\ud800"#.utf8),
            Array(#"\udfff\ud800"#.utf8), [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82],
            [0xFE], [0xF4, 0x90, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80],
        ]
        let paths = ["/v1/check-update", "/v1/fetch-schema", "/v1/fetch-data", "/v1/post-data"]
        for path in paths {
            let control = try await running.alice.send(path, body: acceptable(Array("fine é \u{10FFFF}".utf8)))
            #expect(control.status == 200, "\(path) accepts the body with valid text")
        }
        let bodies = start + unacceptable.map(acceptable)
        for body in bodies {
            for path in paths {
                let answer = try await running.alice.send(path, body: body)
                #expect(answer.status == 400, "\(path) \(String(decoding: body.suffix(60), as: UTF8.self))")
            }
        }
        try await expectHealthy(running)
    }

    #if canImport(Glibc)
        @Test func garbageOnTheSocketLeavesTheServerHealthy() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            let garbage = [
                "\u{16}\u{3}\u{1}\u{0}\u{a5}\u{1}\u{0}\u{0}",  // a TLS hello
                "NOT HTTP AT ALL\r\n\r\n",
                "POST /v1/fetch-data HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"tab",  // cut short
                "POST /v1/fetch-data HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                "POST /v1/fetch-data HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n",
                "POST /v1/fetch-data HTTP/1.1\r\n"
                    + String(repeating: "X-Long: \(String(repeating: "a", count: 1000))\r\n", count: 200),
            ]
            for text in garbage {
                try sendRaw(text, to: running.server.port)
            }
            try await expectHealthy(running)
        }
    #endif

    @Test(arguments: SyncStoreKind.allCases)
    func rowsThatDoNotFitTheirTableAreRejectedOneByOne(_ kind: SyncStoreKind) async throws {
        let running = try RunningSyncServer(kind)
        defer { try? running.stop() }
        let bad = [
            #"{"id": "a", "title": "t", "colour": "red"}"#,
            #"{"title": "no key"}"#,
            #"{"id": "a"}"#,
            #"{"id": "a", "title": null}"#,
            #"{"id": "a", "title": 12}"#,
            #"{"id": "a", "title": true}"#,
            #"{"id": "a", "title": ["x"]}"#,
            #"{"id": "a", "title": {"base64": "AAAA"}}"#,
            #"{"id": null, "title": "t"}"#,
            #"{"id": "a", "ID": "b", "title": "t"}"#,
        ]
        let mutations =
            bad.enumerated().map { upsert($0.offset + 1, "note", $0.element) } + [
                upsert(100, "note", #"{"id": "good", "title": "fine"}"#)
            ]
        let answer = try await running.alice.postData(client: "d", mutations)
        #expect(answer.status == 200)
        let results = try #require(answer["results"]?.arrayValue)
        for result in results.dropLast() {
            #expect(result["status"] == .string("rejected"), "\(result)")
            #expect(result["error"]?.stringValue?.isEmpty == false)
        }
        #expect(results.last?["status"] == .string("applied"))
        #expect(results[0]["error"] == .string(#"the row names column "colour", which table "note" does not have"#))
        #expect(results[2]["error"] == .string(#"column "title" is NOT NULL and has no default"#))
        try await expectHealthy(running)
    }

    private func expectHealthy(_ running: RunningSyncServer) async throws {
        let seq = Int.random(in: 1...1_000_000)
        let posted = try await running.alice.postData(
            client: "health", [upsert(seq, "note", #"{"id": "health-\#(seq)", "title": "ok"}"#)])
        #expect(posted.status == 200)
        #expect(posted["results"]?[0]?["status"] == .string("applied"))
        #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
    }

    #if canImport(Glibc)
        /// Writes bytes on a new connection, reads whatever comes back, and closes it.
        private func sendRaw(_ text: String, to port: UInt16) throws {
            let connection = try RawConnection(port: port)
            connection.send(text)
            connection.finishSending()
            _ = connection.answer(within: 5)
        }
    #endif
}
