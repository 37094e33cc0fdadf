import Foundation
import SerialDBSyncWire
import SerialDBTestSupport
import Testing

@testable import SerialDBSyncServer

/// What one client can do to a server that others share: make it buffer bodies it will refuse,
/// hold its connections, trickle bytes for ever, slip a NUL past the token check, or write
/// control bytes into its log. None of it may cost the other clients their service.
@Suite(.timeLimit(.minutes(5))) struct HostileClientTests {
    #if canImport(Glibc)
        @Test func aRequestWithoutAValidTokenIsAnsweredBeforeItsBodyIsSent() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            let authorizations = ["", "Authorization: Bearer t-mallory\r\n", "Authorization: Basic dC1hbGljZQ==\r\n"]
            for authorization in authorizations {
                let connection = try RawConnection(port: running.server.port)
                // The headers announce 4 MiB, and not one byte of them follows: a server that
                // waited for the body would answer nothing.
                connection.send(
                    "POST /v1/post-data HTTP/1.1\r\nHost: x\r\n\(authorization)Content-Type: application/json\r\n"
                        + "Content-Length: \(4 * 1024 * 1024)\r\n\r\n")
                let answer = try #require(connection.answer(), "no answer before the body: \(authorization)")
                #expect(answer.hasPrefix("HTTP/1.1 401"), "\(authorization): \(answer.prefix(60))")
                #expect(answer.contains("\"unauthorized\""))
            }
            // A valid token gets its body read and answered as usual.
            let body = #"{"tables": []}"#
            let connection = try RawConnection(port: running.server.port)
            connection.send(
                "POST /v1/check-update HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
            #expect(connection.answer()?.hasPrefix("HTTP/1.1 200") == true)
        }

        @Test func controlBytesOfARequestPathAreEscapedInTheLog() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            // Raw in the request line: ESC [2J (clear the screen), BEL, DEL; percent-encoded (the
            // server decodes them): a new line and a forged field.
            let connection = try RawConnection(port: running.server.port)
            connection.send(
                "POST /v1/\u{1b}[2J\u{7}\u{7f}x\\y%0d%0aPOST%20/v1/x%20account=bob HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
            )
            #expect(connection.answer()?.hasPrefix("HTTP/1.1 404") == true)
            let line = try #require(running.log.withLock { $0.last }).description
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(line.debugDescription)")
            #expect(
                line.hasPrefix(
                    #"POST /v1/\x1b[2J\x07\x7fx\\y\x0d\x0aPOST\x20/v1/x\x20account=bob account=- status=404 "#),
                "\(line)")
        }

        @Test func oneAddressCannotTakeEveryConnection() async throws {
            let running = try RunningSyncServer(.sqliteMemory) { $0.maximumConnectionsPerAddress = 3 }
            defer { try? running.stop() }
            let body = #"{"tables": []}"#
            let request =
                "POST /v1/check-update HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
            // Three kept-alive connections from 127.0.0.1, each known to the server (answered).
            var held: [RawConnection] = []
            for _ in 0..<3 {
                let connection = try RawConnection(port: running.server.port, from: "127.0.0.1")
                connection.send(request)
                #expect(connection.answer()?.hasPrefix("HTTP/1.1 200") == true)
                held.append(connection)
            }
            let fourth = try RawConnection(port: running.server.port, from: "127.0.0.1")
            fourth.send(request)
            #expect(fourth.answer() == "", "a fourth connection from the same address is closed unanswered")
            let other = try RawConnection(port: running.server.port, from: "127.0.0.2")
            other.send(request)
            #expect(other.answer()?.hasPrefix("HTTP/1.1 200") == true, "another address is served")
            held.removeAll()
            // Once the three are gone, the address is served again (the server notices each
            // close on its own schedule: bounded retries).
            var servedAgain = false
            for _ in 0..<50 where !servedAgain {
                let again = try RawConnection(port: running.server.port, from: "127.0.0.1")
                again.send(request)
                servedAgain = again.answer()?.hasPrefix("HTTP/1.1 200") == true
                if !servedAgain { try await Task.sleep(for: .milliseconds(100)) }
            }
            #expect(servedAgain)
        }

        @Test func pipelinedRequestsAreAnsweredInOrder() async throws {
            let running = try RunningSyncServer(.sqliteMemory)
            defer { try? running.stop() }
            let bodies = [#"{"tables": []}"#, #"{"table": "note"}"#, #"{"table": "nothing"}"#]
            let paths = ["/v1/check-update", "/v1/fetch-schema", "/v1/fetch-schema"]
            let connection = try RawConnection(port: running.server.port)
            // Three requests in one write, before any answer.
            connection.send(
                zip(paths, bodies).map { path, body in
                    "POST \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                }.joined())
            var answers: [String] = []
            for _ in paths {
                answers.append(connection.answer() ?? "")
            }
            #expect(answers.map { $0.prefix(12) } == ["HTTP/1.1 200", "HTTP/1.1 200", "HTTP/1.1 400"])
            #expect(answers[0].contains(#""account":"alice""#))
            #expect(answers[1].contains(#""table":"note""#))
        }

        @Test func threeHundredSlowSocketsDoNotStopOthersBeingServed() async throws {
            let running = try RunningSyncServer(.sqliteMemory) { $0.maximumConnectionsPerAddress = 1000 }
            defer { try? running.stop() }
            var slow: [RawConnection] = []
            for index in 0..<300 {
                let connection = try RawConnection(port: running.server.port)
                connection.send("POST /v1/check-update HTTP/1.1\r\nHost: x\r\nX-Slow-\(index): ")
                slow.append(connection)
            }
            for _ in 0..<5 {
                #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
            }
            #expect(slow.allSatisfy { $0.send("a") }, "the slow sockets are still open")
        }

        @Test func aRequestTrickledInByteByByteIsCutAtItsDeadline() async throws {
            let running = try RunningSyncServer(.sqliteMemory) {
                $0.requestTimeoutSeconds = 1
                $0.connectionTimeoutSeconds = 600
            }
            defer { try? running.stop() }
            // Stalled in the headers, and in the body: each byte comes well within the idle
            // timeout, so only a deadline for the whole request ends them.
            let prefixes = [
                "POST /v1/check-update HTTP/1.1\r\nHost: x\r\nX-Slow: ",
                "POST /v1/check-update HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer t-alice\r\n"
                    + "Content-Length: 100000\r\n\r\n",
            ]
            for prefix in prefixes {
                let connection = try RawConnection(port: running.server.port)
                connection.send(prefix)
                var cut = false
                // Bounded: 30 s of trickling (the deadline is 1 s).
                for _ in 0..<300 where !cut {
                    cut = !connection.send("a") || connection.isClosedByServer(waitingMilliseconds: 100)
                }
                #expect(cut, "the server still reads a request trickled in for 30 s: \(prefix.debugDescription)")
            }
            #expect(try await running.alice.post("/v1/check-update", #"{"tables": []}"#).status == 200)
        }
    #endif

    @Test func theServersOwnTimeOnARequestDoesNotCountAgainstItsDeadline() async throws {
        let gate = GatedStore(try SQLiteSyncStore())
        var options = SyncServerOptions()
        options.port = 0
        options.requestTimeoutSeconds = 1
        let server = try SyncServer(configuration: try SyncFixtures.configuration(), store: gate, options: options)
        defer { server.stop() }
        let client = SyncHTTPClient(baseURL: server.url, token: "t-alice")
        let inFlight = Task { try await client.fetchData("note", since: 0) }
        try await waitUntil { gate.entered }
        // Held inside the store for longer than the deadline.
        try await Task.sleep(for: .milliseconds(2500))
        gate.open()
        #expect(try await inFlight.value.status == 200)
        try gate.close()
    }

    @Test func theLogLineEscapesEveryFieldAClientOrAStoreCanFill() {
        let entry = SyncRequestLog(
            method: "PO\u{1b}ST", path: "/a\\b c\u{85}", account: "x y", status: 500, duration: .milliseconds(2),
            internalError: "disk\non fire")
        #expect(
            entry.description
                == #"PO\x1bST /a\\b\x20c\u0085 account=x\x20y status=500 2.0ms error=disk\x0aon fire"#)
    }

    @Test func aNULInsideTheAuthorizationGivenToTheServiceIsRefused() throws {
        let service = try SyncService(configuration: try SyncFixtures.configuration(), store: try SQLiteSyncStore())
        defer { try? service.store.close() }
        for authorization in ["Bearer t-alice\u{0}", "Bearer t-alice\u{0}x", "Bearer \u{0}t-alice"] {
            let response = service.handle(
                SyncRequest(
                    method: "POST", path: "/v1/check-update", authorization: authorization,
                    body: Data(#"{"tables": []}"#.utf8)))
            #expect(response.status == 401, "\(authorization.debugDescription)")
            #expect(
                service.refusal(method: "POST", path: "/v1/check-update", authorization: authorization)?.status
                    == 401)
        }
        #expect(service.refusal(method: "POST", path: "/v1/check-update", authorization: "Bearer t-alice") == nil)
    }
}
