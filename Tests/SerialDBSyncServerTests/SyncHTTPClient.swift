import Foundation
import SerialDBSyncServer
import SerialDBSyncWire

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Talks to a sync server over real HTTP with URLSession, as any client would.
struct SyncHTTPClient: Sendable {
    let baseURL: URL
    let token: String?

    /// An answer: the status and the parsed JSON body.
    struct Answer: Sendable {
        let status: Int
        let json: JSONValue
        /// The body's length in bytes.
        var byteCount = 0

        /// `error.code` of an error body.
        var errorCode: String? { json.objectValue?["error"]?.objectValue?["code"]?.stringValue }
        /// `error.message` of an error body.
        var errorMessage: String? { json.objectValue?["error"]?.objectValue?["message"]?.stringValue }
        /// A member of the top-level object.
        subscript(_ name: String) -> JSONValue? { json.objectValue?[name] }
    }

    /// POSTs raw bytes; every wait is bounded by the request timeout.
    func send(_ path: String, body: Data, method: String = "POST", token: String?? = .none) async throws -> Answer {
        var request = URLRequest(url: baseURL.appendingPathComponent(path))
        request.httpMethod = method
        request.timeoutInterval = 60
        if method != "GET" { request.httpBody = body }
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token = token ?? self.token {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return Answer(status: status, json: try JSONValue.parse(data), byteCount: data.count)
    }

    /// POSTs JSON text.
    func post(_ path: String, _ json: String) async throws -> Answer {
        try await send(path, body: Data(json.utf8))
    }

    /// Posts mutations (JSON objects as text) under a client id.
    func postData(client: String, _ mutations: [String]) async throws -> Answer {
        try await post(
            "/v1/post-data", #"{"client_id": "\#(client)", "mutations": [\#(mutations.joined(separator: ","))]}"#)
    }

    /// fetch-data from `since`.
    func fetchData(_ table: String, since: Int64, limit: Int? = nil) async throws -> Answer {
        let limitMember = limit.map { #", "limit": \#($0)"# } ?? ""
        return try await post("/v1/fetch-data", #"{"table": "\#(table)", "since": \#(since)\#(limitMember)}"#)
    }

    /// Follows the cursor from `since` until `has_more` is false; returns every change and the last cursor.
    func fetchAll(_ table: String, since: Int64 = 0, limit: Int? = nil) async throws -> (
        changes: [JSONValue], cursor: Int64
    ) {
        var cursor = since
        var changes: [JSONValue] = []
        while true {
            let page = try await fetchData(table, since: cursor, limit: limit)
            guard page.status == 200 else { throw UnexpectedAnswer(answer: page) }
            changes += page["changes"]?.arrayValue ?? []
            cursor = page["version"]?.integerValue ?? cursor
            if page["has_more"] != .bool(true) { return (changes, cursor) }
        }
    }
}

/// An answer a helper did not expect.
struct UnexpectedAnswer: Error {
    let answer: SyncHTTPClient.Answer
}

/// A mutation as JSON text.
func upsert(_ seq: Int, _ table: String, _ row: String, base: Int64 = 0) -> String {
    #"{"seq": \#(seq), "table": "\#(table)", "op": "upsert", "row": \#(row), "base_version": \#(base)}"#
}

/// A delete as JSON text.
func delete(_ seq: Int, _ table: String, _ key: String, base: Int64) -> String {
    #"{"seq": \#(seq), "table": "\#(table)", "op": "delete", "key": \#(key), "base_version": \#(base)}"#
}

extension JSONValue {
    /// A member of an object, for terse assertions.
    subscript(_ name: String) -> JSONValue? { objectValue?[name] }
    /// An element of an array.
    subscript(_ index: Int) -> JSONValue? {
        guard let array = arrayValue, array.indices.contains(index) else { return nil }
        return array[index]
    }
}
