import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// POSTs over one URLSession and waits for each answer: `bench` is synchronous, and its main
/// thread is not a cooperative one, so blocking it on a semaphore is fine.
struct BlockingHTTPClient {
    let baseURL: URL
    let token: String

    func post(_ path: String, body: Data) throws -> Data {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = "POST"
        request.httpBody = body
        request.timeoutInterval = 120
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let done = DispatchSemaphore(value: 0)
        let outcome = LockedOutcome()
        URLSession.shared.dataTask(with: request) { data, response, error in
            outcome.set(data: data, status: (response as? HTTPURLResponse)?.statusCode, error: error)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 120) == .success else { throw BenchError.sync("\(path) did not answer") }
        let (data, status, error) = outcome.get()
        if let error { throw error }
        guard status == 200, let data else {
            throw BenchError.sync("\(path) answered \(status ?? 0): \(String(decoding: data ?? Data(), as: UTF8.self))")
        }
        return data
    }
}

/// The answer handed from URLSession's thread to the waiting one.
private final class LockedOutcome: @unchecked Sendable {
    // Safe: every access goes through `lock`.
    private let lock = NSLock()
    private var value: (Data?, Int?, (any Error)?) = (nil, nil, nil)

    func set(data: Data?, status: Int?, error: (any Error)?) {
        lock.withLock { value = (data, status, error) }
    }

    func get() -> (Data?, Int?, (any Error)?) {
        lock.withLock { value }
    }
}
