import SerialDBSyncWire

/// A transport that hands over a fetch-data answer as it came, so that a fetch reads the
/// page's cursor first and sends the next request before it reads the rows
/// (``HTTPSyncTransport``; a transport without it is asked for whole pages).
protocol FetchDataBytesTransport: SyncTransport {
    /// The answer's bytes, or the error ``SyncTransport/fetchData(_:)`` throws for a failed call.
    func fetchDataBytes(_ request: FetchDataRequest) async throws -> [UInt8]

    /// The error ``SyncTransport/fetchData(_:)`` throws for an answer it cannot read.
    func unreadableAnswer(_ error: any Error) -> any Error
}

/// One fetch-data answer on its way to being applied: its header (the cursor, whether more
/// follow, resync, floor) read at once, its changes read in their own task, which runs while
/// the next request travels and the page before is written.
struct FetchedPage: Sendable {
    /// The answer; its changes are empty while ``changes`` reads them.
    let header: FetchDataResponse
    /// The changes being read, or `nil` when ``header`` holds them.
    private let changes: Task<[SyncChange], any Error>?

    /// Asks `transport` for a page.
    static func fetch(_ request: FetchDataRequest, from transport: any SyncTransport) async throws -> FetchedPage {
        guard let transport = transport as? any FetchDataBytesTransport else {
            return FetchedPage(header: try await transport.fetchData(request), changes: nil)
        }
        let bytes = try await transport.fetchDataBytes(request)
        guard let (header, range) = FetchDataResponse.readSkippingChanges(bytes) else {
            do {
                return FetchedPage(header: try FetchDataResponse(fetchDataBytes: bytes), changes: nil)
            } catch {
                throw transport.unreadableAnswer(error)
            }
        }
        let changes = Task {
            do {
                return try FetchDataResponse.readChanges(bytes, in: range)
            } catch {
                throw transport.unreadableAnswer(error)
            }
        }
        return FetchedPage(header: header, changes: changes)
    }

    /// The whole page, once its changes are read.
    func page() async throws -> FetchDataResponse {
        guard let changes else { return header }
        var page = header
        page.changes = try await changes.value
        return page
    }
}
