import Foundation
import SerialDB
import SerialDBSync
import SerialDBTestSupport
import Testing

/// The `catch` clauses of `SyncError`'s documentation and the README, compiled and run as written.
@Suite struct SyncCatchExampleTests {
    /// Which clause caught the error.
    enum Caught: Equatable {
        case network, signIn, other
    }

    /// Runs a sync and says which of the documented clauses caught its error.
    private func caught(syncing client: SyncClient) async -> Caught {
        do {
            _ = try await client.sync()
            return .other
        } catch SyncError.Code.network {
            return .network
        } catch let error as SyncError where error.code == .server && error.httpStatus == 401 {
            return .signIn
        } catch {
            return .other
        }
    }

    @Test func aServerThatCannotBeReachedIsCaughtByTheNetworkCode() async throws {
        let directory = try TemporaryDirectory()
        let queue = try DatabaseQueue(path: directory.path("app.sqlite"))
        // Port 1 on the loopback: nothing listens there, the connection is refused at once.
        let client = try SyncClient(
            queue: queue, transport: HTTPSyncTransport(baseURL: URL(string: "http://127.0.0.1:1")!, token: "t"))
        #expect(await caught(syncing: client) == .network)
    }

    @Test func anUnknownTokenIsCaughtByTheWhereClauseNotByTheNetworkCode() async throws {
        let directory = try TemporaryDirectory()
        let device = try Device(
            .file, in: directory, name: "app", server: try InProcessSyncServer(tables: [noteTable]), token: "t-nobody")
        #expect(await caught(syncing: device.client) == .signIn)
    }

    @Test func aCodeMatchesOnlyASyncErrorWithThatCode() {
        let network = SyncError(.network, "down")
        #expect(SyncError.Code.network ~= network)
        #expect(!(SyncError.Code.server ~= network))
        #expect(!(SyncError.Code.network ~= SerialDBError(.closed, "closed")))
        #expect(SyncError.Code.network.description == "network")
        #expect(SyncError.Code(rawValue: "network") == .network)
    }
}
