/// How a ``SyncClient`` reaches the server: the four calls of the wire protocol.
///
/// ``HTTPSyncTransport`` speaks HTTP; tests inject their own to simulate a server, a lost
/// response or a failing network. A transport throws ``SyncError`` for a network or server
/// error; the client then stops with everything it applied so far consistent.
public protocol SyncTransport: Sendable {
    /// `POST /v1/check-update`.
    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse
    /// `POST /v1/fetch-schema`.
    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse
    /// `POST /v1/fetch-data`.
    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse
    /// `POST /v1/post-data`.
    func postData(_ request: PostDataRequest) async throws -> PostDataResponse
}
