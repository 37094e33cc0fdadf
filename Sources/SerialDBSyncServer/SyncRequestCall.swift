import SerialDBSyncWire

/// Which call of the protocol a request was, as the metrics, the status page and the JSON log
/// name it: its path, whatever its method; `other` for a path that is no call.
public enum SyncRequestCall: String, Sendable, CaseIterable {
    /// `/v1/check-update`.
    case checkUpdate = "check-update"
    /// `/v1/fetch-schema`.
    case fetchSchema = "fetch-schema"
    /// `/v1/fetch-data`.
    case fetchData = "fetch-data"
    /// `/v1/post-data`.
    case postData = "post-data"
    /// Any other path (answered 404).
    case other

    /// The call at `path` (`/v1/post-data`), `other` when there is none.
    public init(path: String) {
        switch SyncCall(path: path) {
        case .checkUpdate: self = .checkUpdate
        case .fetchSchema: self = .fetchSchema
        case .fetchData: self = .fetchData
        case .postData: self = .postData
        case nil: self = .other
        }
    }

    /// Its position in `allCases`, for tables of counters.
    var index: Int {
        switch self {
        case .checkUpdate: 0
        case .fetchSchema: 1
        case .fetchData: 2
        case .postData: 3
        case .other: 4
        }
    }
}
