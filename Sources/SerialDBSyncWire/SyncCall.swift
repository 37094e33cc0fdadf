/// The four calls of the protocol, each a `POST` of JSON to its path.
public enum SyncCall: String, Sendable, CaseIterable {
    /// Which tables changed: ``CheckUpdateRequest`` → ``CheckUpdateResponse``.
    case checkUpdate = "/v1/check-update"
    /// A table's definition: ``FetchSchemaRequest`` → ``FetchSchemaResponse``.
    case fetchSchema = "/v1/fetch-schema"
    /// A page of a table's changes: ``FetchDataRequest`` → ``FetchDataResponse``.
    case fetchData = "/v1/fetch-data"
    /// An upload: ``PostDataRequest`` → ``PostDataResponse``.
    case postData = "/v1/post-data"

    /// The path, from the server's root (`/v1/check-update`).
    public var path: String { rawValue }

    /// The call at `path`, or `nil`.
    public init?(path: String) {
        self.init(rawValue: path)
    }
}
