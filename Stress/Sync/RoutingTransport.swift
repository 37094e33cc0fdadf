import Foundation
import SerialDBSync

/// A device's transport: HTTP to wherever the server listens now, or a network error while it
/// is down (a restarted server listens on a new port).
struct RoutingTransport: SyncTransport {
    let server: SyncServerProcess
    let token: String

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await current().checkUpdate(request)
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await current().fetchSchema(request)
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        try await current().fetchData(request)
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        try await current().postData(request)
    }

    private func current() throws -> HTTPSyncTransport {
        guard let url = server.url else {
            throw SyncError(.network, "The stress harness's sync server is down (killed, not restarted yet).")
        }
        return HTTPSyncTransport(baseURL: url, token: token)
    }
}
