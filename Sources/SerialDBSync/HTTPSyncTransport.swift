import Foundation
import SerialDBSyncWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The wire protocol over HTTP/1.1 with URLSession: every call a `POST` of JSON with
/// `Authorization: Bearer TOKEN`.
///
/// ```swift
/// let transport = HTTPSyncTransport(baseURL: URL(string: "https://sync.example.com")!, token: "t-alice")
/// ```
///
/// A failure to connect or a broken connection throws ``SyncError/Code/network``; an error
/// answer (`{"error": {"code", "message"}}`) throws ``SyncError/Code/server`` with the HTTP
/// status and the server's code; an answer that is not the protocol's JSON throws
/// ``SyncError/Code/invalidResponse``. Cancelling the task cancels the request.
public struct HTTPSyncTransport: SyncTransport {
    /// The server's base URL; calls go to `/v1/...` under it.
    public let baseURL: URL
    /// The bearer token: it decides the account.
    public let token: String
    /// The session the requests go through.
    public let session: URLSession

    /// Creates a transport.
    ///
    /// - Parameters:
    ///   - baseURL: the server, e.g. `http://127.0.0.1:8080`.
    ///   - token: the account's bearer token.
    ///   - session: by default an ephemeral session (no cookies, no cache) with a 60-second
    ///     request timeout.
    public init(baseURL: URL, token: String, session: URLSession? = nil) {
        self.baseURL = baseURL
        self.token = token
        self.session = session ?? Self.defaultSession
    }

    private static let defaultSession: URLSession = {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 60
        return URLSession(configuration: configuration)
    }()

    /// `POST /v1/check-update`.
    public func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await post(.checkUpdate, request)
    }

    /// `POST /v1/fetch-schema`.
    public func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await post(.fetchSchema, request)
    }

    /// `POST /v1/fetch-data`, its answer read without a JSON tree
    /// (`FetchDataResponse.init(fetchDataBytes:)`).
    public func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        try await post(.fetchData, request) { try FetchDataResponse(fetchDataBytes: $0) }
    }

    /// `POST /v1/post-data`, its answer read without a JSON tree
    /// (``PostDataResponse/init(postDataBytes:)``).
    public func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        try await post(.postData, request) { try PostDataResponse(postDataBytes: $0) }
    }

    private func post<Request: WireCodable, Response: WireCodable>(
        _ call: SyncCall, _ body: Request, read: (Data) throws -> Response = { try Response(jsonBytes: $0) }
    ) async throws -> Response {
        let data = try await send(call, body)
        do {
            return try read(data)
        } catch {
            throw unreadableAnswer(to: call, error)
        }
    }

    private func unreadableAnswer(to call: SyncCall, _ error: any Error) -> SyncError {
        SyncError(
            .invalidResponse, "The sync server's answer to \(call.path.dropFirst()) is not the protocol's JSON.",
            underlying: error)
    }

    /// Sends the request; returns the body of a 200 answer, throws for anything else.
    private func send<Request: WireCodable>(_ call: SyncCall, _ body: Request) async throws -> Data {
        let path = String(call.path.dropFirst())
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization")
        request.httpBody = Data(try body.jsonBytes())
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError where error.code == .cancelled {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            throw SyncError(
                .network, "The sync server at \(baseURL.absoluteString) could not be reached; try again later.",
                underlying: error)
        }
        guard let http = response as? HTTPURLResponse else {
            throw SyncError(.invalidResponse, "The sync server's answer to \(path) is not HTTP.")
        }
        guard http.statusCode == 200 else {
            if let detail = try? SyncErrorBody(jsonBytes: data) {
                throw SyncError(
                    .server, "The sync server refused \(path): \(detail.message) (\(detail.code)).",
                    httpStatus: http.statusCode, serverCode: detail.code)
            }
            throw SyncError(
                .server, "The sync server answered \(path) with HTTP \(http.statusCode).", httpStatus: http.statusCode)
        }
        return data
    }
}

extension HTTPSyncTransport: FetchDataBytesTransport {
    func fetchDataBytes(_ request: FetchDataRequest) async throws -> [UInt8] {
        Array(try await send(.fetchData, request))
    }

    func unreadableAnswer(_ error: any Error) -> any Error {
        unreadableAnswer(to: .fetchData, error)
    }
}
