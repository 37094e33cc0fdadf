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
    /// The answer without its changes.
    let header: FetchDataResponse
    /// The changes being read, or `nil` when ``read`` holds them.
    private let reading: Task<PageChanges, any Error>?
    private let read: PageChanges

    /// Asks `transport` for a page.
    static func fetch(_ request: FetchDataRequest, from transport: any SyncTransport) async throws -> FetchedPage {
        guard let transport = transport as? any FetchDataBytesTransport else {
            return FetchedPage(answer: try await transport.fetchData(request))
        }
        let bytes = try await transport.fetchDataBytes(request)
        guard let (header, range) = FetchDataResponse.readSkippingChanges(bytes) else {
            do {
                return FetchedPage(answer: try FetchDataResponse(fetchDataBytes: bytes))
            } catch {
                throw transport.unreadableAnswer(error)
            }
        }
        let reading = Task {
            do {
                return try FetchDataResponse.readChanges(bytes, in: range, afterEach: ProcessorSharing.afterChange)
            } catch {
                throw transport.unreadableAnswer(error)
            }
        }
        return FetchedPage(header: header, reading: reading, read: PageChanges())
    }

    /// A page whose changes are read already.
    private init(answer: FetchDataResponse) {
        var header = answer
        header.changes = []
        self.init(header: header, reading: nil, read: PageChanges(answer.changes))
    }

    private init(header: FetchDataResponse, reading: Task<PageChanges, any Error>?, read: PageChanges) {
        self.header = header
        self.reading = reading
        self.read = read
    }

    /// The page's changes, once they are read.
    func changes() async throws -> PageChanges {
        guard let reading else { return read }
        return try await reading.value
    }
}
