import Foundation
import SerialDBSyncServer
import Synchronization

@testable import SerialDBSync

/// One account's way to an ``InProcessSyncServer``: each call encoded by the protocol module,
/// answered by the real service, decoded back, with an HTTP error turned into the
/// ``SyncError`` ``HTTPSyncTransport`` throws. Hooks run before (or after) a call to simulate a
/// network failure, a lost answer, a cancelled task or a concurrent app write; they never
/// decide anything the server decides.
final class InProcessTransport: SyncTransport {
    enum Moment: Sendable {
        /// Before the server sees the request.
        case before
        /// After the server handled it, before the client sees the answer.
        case after
    }

    struct Hook: Sendable {
        var call: String
        var moment: Moment
        var action: @Sendable () async throws -> Void
    }

    let server: InProcessSyncServer
    let token: String
    let hooks = Mutex<[Hook]>([])
    let calls = Mutex<[String]>([])
    /// Every fetch-data request the client made, as it made it.
    let fetchRequests = Mutex<[FetchDataRequest]>([])
    /// Rewrites the next fetch-data answer before the client sees it (a server of another
    /// implementation, sending rows of another shape).
    let rewriteNextPage = Mutex<(@Sendable (FetchDataResponse) -> FetchDataResponse)?>(nil)

    /// Rewrites the bytes of the next fetch-data answer (an answer whose rows cannot be read).
    let rewriteNextAnswerBytes = Mutex<(@Sendable ([UInt8]) -> [UInt8])?>(nil)

    init(server: InProcessSyncServer, token: String) {
        self.server = server
        self.token = token
    }

    /// Runs `action` once, at the next `call` ("check-update", "fetch-schema", "fetch-data",
    /// "post-data") at `moment`. A throwing action makes the call fail.
    func once(_ call: String, _ moment: Moment = .before, _ action: @escaping @Sendable () async throws -> Void) {
        hooks.withLock { $0.append(Hook(call: call, moment: moment, action: action)) }
    }

    /// Gives change `index` of the next fetch-data page a column no table has, so that the
    /// page fails to apply at that row, after the rows before it were written.
    func spoilNextPage(atChange index: Int) {
        rewriteNextPage.withLock {
            $0 = { page in
                var page = page
                page.changes[index].row["no_such_column"] = .text("x")
                return page
            }
        }
    }

    /// A network failure at the next `call`: before the server sees it, or after it answered
    /// (the answer is lost).
    func failOnce(_ call: String, _ moment: Moment = .before) {
        once(call, moment) { throw SyncError(.network, "simulated network failure") }
    }

    private func run(_ name: String, _ moment: Moment) async throws {
        let hook = hooks.withLock { hooks -> Hook? in
            guard let index = hooks.firstIndex(where: { $0.call == name && $0.moment == moment }) else { return nil }
            return hooks.remove(at: index)
        }
        try await hook?.action()
    }

    /// `read` reads the answer's bytes: fetch-data's are read as ``HTTPSyncTransport`` reads them.
    private func perform<Request: WireCodable, Response: WireCodable>(
        _ call: SyncCall, _ request: Request, read: (Data) throws -> Response = Response.init(jsonBytes:)
    ) async throws -> Response {
        let name = String(call.path.dropFirst(4))  // "/v1/check-update" → "check-update"
        calls.withLock { $0.append(name) }
        try await run(name, .before)
        let answer = server.handle(
            SyncRequest(
                method: "POST", path: call.path, authorization: "Bearer " + token, body: Data(try request.jsonBytes())))
        guard answer.status == 200 else {
            let body = try? SyncErrorBody(jsonBytes: answer.body)
            throw SyncError(
                .server, "The sync server refused \(name): \(body?.message ?? "") (\(body?.code ?? "")).",
                httpStatus: answer.status, serverCode: body?.code)
        }
        let response: Response
        do {
            response = try read(answer.body)
        } catch {
            throw SyncError(.invalidResponse, "The answer to \(name) is not the protocol's JSON.", underlying: error)
        }
        try await run(name, .after)
        return response
    }

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await perform(.checkUpdate, request)
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await perform(.fetchSchema, request)
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        fetchRequests.withLock { $0.append(request) }
        var request = request
        let bends = server.bends.withLock { $0 }
        if let cap = bends.pageCap { request.limit = min(request.limit, cap) }
        if bends.ignoresResyncing { request.resyncing = false }
        var page = try await perform(.fetchData, request, read: FetchDataResponse.init(fetchDataBytes:))
        // A server older than protocol 1.1 neither honours "resyncing" nor sends "floor".
        if bends.ignoresResyncing { page.floor = nil }
        guard
            let rewrite = rewriteNextPage.withLock({ rewrite in
                defer { rewrite = nil }
                return rewrite
            })
        else {
            return page
        }
        return rewrite(page)
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        server.receivedSeqs.withLock { seqs in
            seqs.append(contentsOf: request.mutations.map { request.clientID + "|" + String($0.seq) })
        }
        return try await perform(.postData, request)
    }
}

/// Answers are handed over as bytes, as ``HTTPSyncTransport`` hands them over, so that the
/// client reads each page's cursor before its rows here too.
extension InProcessTransport: FetchDataBytesTransport {
    func fetchDataBytes(_ request: FetchDataRequest) async throws -> [UInt8] {
        let page = try await fetchData(request)
        var bytes = try page.jsonBytes()
        if page.floor == nil {
            // The writer writes every answer as protocol 1.1 does (with a floor); a server
            // older than 1.1 sends none.
            let floor = Array(#","floor":0}"#.utf8)
            precondition(bytes.suffix(floor.count).elementsEqual(floor))
            bytes.replaceSubrange((bytes.count - floor.count)..., with: Array("}".utf8))
        }
        let rewrite = rewriteNextAnswerBytes.withLock { rewrite in
            defer { rewrite = nil }
            return rewrite
        }
        return rewrite?(bytes) ?? bytes
    }

    func unreadableAnswer(_ error: any Error) -> any Error {
        SyncError(.invalidResponse, "The answer to fetch-data is not the protocol's JSON.", underlying: error)
    }
}
