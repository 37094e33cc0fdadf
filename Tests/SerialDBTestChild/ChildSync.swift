import Foundation
import SerialDB
import SerialDBSync
import Synchronization

/// `serialdb-test-child sync PATH URL TOKEN PAGE_SIZE PAGES`: syncs PATH with the server at
/// URL; once PAGES fetch-data answers have arrived, the next fetch-data request prints
/// "paused" and never returns, so that a test kills the process between pages. Prints "done"
/// when the sync ends first.
enum ChildSync {
    static func run(path: String, url: URL, token: String, pageSize: Int, pages: Int) throws {
        let transport = PausingTransport(HTTPSyncTransport(baseURL: url, token: token), pauseAfter: pages)
        let outcome = Mutex<(any Error)??>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                let queue = try DatabaseQueue(path: path)
                _ = try await SyncClient(queue: queue, transport: transport, pageSize: pageSize).sync()
                try await queue.close()
                outcome.withLock { $0 = .some(nil) }
            } catch {
                outcome.withLock { $0 = .some(error) }
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.withLock({ $0 }) ?? nil { throw error }
    }
}

/// A transport that stops answering fetch-data after a number of answers.
private final class PausingTransport: SyncTransport {
    private let base: HTTPSyncTransport
    private let pauseAfter: Int
    private let answered = Mutex(0)

    init(_ base: HTTPSyncTransport, pauseAfter: Int) {
        self.base = base
        self.pauseAfter = pauseAfter
    }

    func checkUpdate(_ request: CheckUpdateRequest) async throws -> CheckUpdateResponse {
        try await base.checkUpdate(request)
    }

    func fetchSchema(_ request: FetchSchemaRequest) async throws -> FetchSchemaResponse {
        try await base.fetchSchema(request)
    }

    func postData(_ request: PostDataRequest) async throws -> PostDataResponse {
        try await base.postData(request)
    }

    func fetchData(_ request: FetchDataRequest) async throws -> FetchDataResponse {
        if answered.withLock({ $0 }) >= pauseAfter {
            FileHandle.standardOutput.write(Data("paused\n".utf8))
            // The test kills the process now; the sleep only bounds a test that does not.
            try await Task.sleep(for: .seconds(300))
            throw CancellationError()
        }
        let page = try await base.fetchData(request)
        answered.withLock { $0 += 1 }
        return page
    }
}
