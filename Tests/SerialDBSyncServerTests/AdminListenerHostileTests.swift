#if canImport(Glibc)
    import Foundation
    import SerialDBSyncServer
    import SerialDBTestSupport
    import Testing

    /// The admin listener against clients that are not Prometheus or a browser: huge paths,
    /// every method, more connections than it takes. Each is answered (or refused) without
    /// harm to the admin listener, which answers again afterwards, or to the public one.
    @Suite(.timeLimit(.minutes(5))) struct AdminListenerHostileTests {
        private static func server() throws -> RunningSyncServer {
            try RunningSyncServer(.sqliteFile) { $0.adminPort = 0 }
        }

        private static func adminPort(_ running: RunningSyncServer) throws -> UInt16 {
            UInt16(try #require(running.server.adminURL?.port))
        }

        /// The status line of the answer to `request`, sent on a connection of its own.
        private static func statusLine(_ request: String, port: UInt16) async throws -> String {
            let answer = try await Self.answer(to: request, port: port) ?? ""
            // "\r\n" is one Character.
            return String(answer.split(separator: "\r\n", maxSplits: 1).first ?? "")
        }

        /// The answer to `request` on a connection of its own (``RawConnection/answer(within:)``),
        /// read on a thread of its own: the blocking reads, up to 30 s when the listener says
        /// nothing, would hold a thread of the cooperative pool that other tests' tasks need.
        private static func answer(to request: String, port: UInt16) async throws -> String? {
            try await onOwnThread {
                let connection = try RawConnection(port: port)
                connection.send(request)
                return connection.answer()
            }
        }

        private static func expectServing(_ running: RunningSyncServer) async throws {
            let admin = try #require(running.server.adminURL)
            #expect(try await PlainAnswer.get("/healthz", from: admin).status == 200)
            #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
        }

        @Test func everyMethodButGETAndHEADIsRefusedAndUnknownPathsAre404() async throws {
            let running = try Self.server()
            defer { try? running.stop() }
            let port = try Self.adminPort(running)
            for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"] {
                for path in ["/", "/metrics", "/healthz"] {
                    let line = try await Self.statusLine(
                        "\(method) \(path) HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello", port: port)
                    #expect(line == "HTTP/1.1 405 Method Not Allowed", "\(method) \(path): \(line)")
                }
            }
            let answer =
                try await Self.answer(to: "HEAD /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", port: port)
                ?? ""
            #expect(answer.hasPrefix("HTTP/1.1 200"), "\(answer)")
            #expect(!answer.contains("# TYPE"), "HEAD has no body: \(answer)")
            // The query is not part of the path; anything else is not one of the three.
            #expect(
                try await Self.statusLine("GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n", port: port).contains(" 200 "))
            for path in ["/metrics/", "//metrics", "/METRICS", "/m%C3%A9trics", "/v1/post-data", "/healthz/../metrics"]
            {
                let line = try await Self.statusLine("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n", port: port)
                #expect(line.contains(" 404 "), "\(path): \(line)")
            }
            try await Self.expectServing(running)
        }

        /// A path of 100 KiB: refused (or the connection closed) from its first bytes.
        @Test func aHugePathIsRefusedAndTheListenerAnswersAfterwards() async throws {
            let running = try Self.server()
            defer { try? running.stop() }
            let port = try Self.adminPort(running)
            let answer = try #require(
                try await Self.answer(
                    to: "GET /" + String(repeating: "m", count: 100 * 1024) + " HTTP/1.1\r\nHost: x\r\n\r\n", port: port
                ),
                "no answer and no close within 30 s")
            #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 414"), "\(answer.prefix(200))")
            let second = try #require(
                try await Self.answer(
                    to: "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Filler: " + String(repeating: "h", count: 100 * 1024),
                    port: port),
                "no answer and no close within 30 s")
            #expect(second.isEmpty || second.hasPrefix("HTTP/1.1 431"), "\(second.prefix(200))")
            try await Self.expectServing(running)
        }

        /// More connections than the admin listener takes (64, 16 per address), held open from
        /// eight addresses: it refuses the rest, the public listener serves on, and once they
        /// close the admin listener answers again.
        @Test func aFloodOfConnectionsToTheAdminListenerLeavesThePublicOneServing() async throws {
            let running = try Self.server()
            defer { try? running.stop() }
            let port = try Self.adminPort(running)
            var flood: [RawConnection] = []
            for address in 2...9 {
                for _ in 0..<10 { flood.append(try RawConnection(port: port, from: "127.0.0.\(address)")) }
            }
            // Each sends half a request, so that the listener holds them.
            for connection in flood { connection.send("GET /metrics HTTP/1.1\r\n") }
            #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
            #expect(running.server.metrics.snapshot().openConnections <= 2, "the admin connections are not counted")
            flood.removeAll()
            let admin = try #require(running.server.adminURL)
            let deadline = ContinuousClock.now + .seconds(60)
            while (try? await PlainAnswer.get("/healthz", from: admin).status) != 200 {
                guard ContinuousClock.now < deadline else { throw WaitTimeout() }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Self.expectServing(running)
        }
    }
#endif
