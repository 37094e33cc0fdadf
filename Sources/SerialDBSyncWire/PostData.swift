/// One local change to upload.
public struct SyncMutation: Sendable, Equatable, WireCodable {
    /// What the change does.
    public enum Operation: String, Sendable, Codable {
        /// Insert or replace the whole row.
        case upsert
        /// Delete the row with this key.
        case delete
    }

    /// This device's increasing sequence number; a retried request reuses it.
    public var seq: Int64
    /// The table's name.
    public var table: String
    /// Upsert or delete.
    public var op: Operation
    /// Every column, for an upsert.
    public var row: [String: SyncValue]?
    /// The primary-key columns, for a delete.
    public var key: [String: SyncValue]?
    /// The server version this device last saw for the key; 0 when it believes the key is new.
    public var baseVersion: Int64

    /// Creates a mutation.
    public init(
        seq: Int64, table: String, op: Operation, row: [String: SyncValue]?, key: [String: SyncValue]?,
        baseVersion: Int64
    ) {
        self.seq = seq
        self.table = table
        self.op = op
        self.row = row
        self.key = key
        self.baseVersion = baseVersion
    }

}

/// `POST /v1/post-data`: a batch of local changes, applied by the server in one transaction.
public struct PostDataRequest: Sendable, Equatable, WireCodable {
    /// This device's id; with `seq` it makes each mutation idempotent.
    public var clientID: String
    /// The changes, in the order they were made.
    public var mutations: [SyncMutation] {
        didSet { encodedMutations = nil }
    }
    /// The wire form of each mutation, when the one who made the request has it already (a
    /// client's outbox keeps it for retries): written as it is instead of encoding every
    /// mutation a second time. Changing ``mutations`` drops it.
    package private(set) var encodedMutations: [String]?

    /// Creates a request.
    public init(clientID: String, mutations: [SyncMutation]) {
        self.clientID = clientID
        self.mutations = mutations
    }

    /// Creates a request whose mutations are already encoded: `encodedMutations[i]` must be
    /// the wire form of `mutations[i]` (``SyncMutation/write(to:)``).
    package init(clientID: String, mutations: [SyncMutation], encodedMutations: [String]) {
        precondition(mutations.count == encodedMutations.count, "one encoded form per mutation")
        self.clientID = clientID
        self.mutations = mutations
        self.encodedMutations = encodedMutations
    }

    /// Requests are equal when their client ids and mutations are: the encoded forms are a
    /// copy of the mutations.
    public static func == (left: PostDataRequest, right: PostDataRequest) -> Bool {
        left.clientID == right.clientID && left.mutations == right.mutations
    }
}

/// The server's state of a row, sent back with a conflict.
public struct SyncCurrentRow: Sendable, Equatable, WireCodable {
    /// The row's current version.
    public var version: Int64
    /// Whether the row is deleted on the server.
    public var deleted: Bool
    /// The server's row (the key alone for a tombstone).
    public var row: [String: SyncValue]?

    /// Creates a current row.
    public init(version: Int64, deleted: Bool, row: [String: SyncValue]?) {
        self.version = version
        self.deleted = deleted
        self.row = row
    }
}

/// What the server did with one mutation.
public struct SyncMutationResult: Sendable, Equatable, WireCodable {
    /// `applied`, `conflict`, `rejected` or `duplicate`.
    public enum Status: String, Sendable, Codable {
        /// Stored under ``SyncMutationResult/version``.
        case applied
        /// The base version did not match; nothing changed; ``SyncMutationResult/current`` says what is there.
        case conflict
        /// The server refused the row; ``SyncMutationResult/error`` says why.
        case rejected
        /// The server answered this seq before and no longer keeps that answer; nothing changed
        /// now. The client treats it as applied: the row's state reaches it through fetch-data.
        case duplicate
    }

    /// The mutation's seq.
    public var seq: Int64
    /// What happened.
    public var status: Status
    /// The new version, for `applied`.
    public var version: Int64?
    /// The server's row, for `conflict`.
    public var current: SyncCurrentRow?
    /// The server's message, for `rejected`.
    public var error: String?

    /// Creates a result.
    public init(
        seq: Int64, status: Status, version: Int64? = nil, current: SyncCurrentRow? = nil, error: String? = nil
    ) {
        self.seq = seq
        self.status = status
        self.version = version
        self.current = current
        self.error = error
    }
}

/// The answer to ``PostDataRequest``: one result per mutation.
public struct PostDataResponse: Sendable, Equatable, WireCodable {
    /// The results, by seq.
    public var results: [SyncMutationResult]

    /// Creates a response.
    public init(results: [SyncMutationResult]) {
        self.results = results
    }
}
