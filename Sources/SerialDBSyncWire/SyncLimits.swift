/// The sizes the protocol fixes, for servers and clients alike.
public enum SyncLimits {
    /// fetch-data's page size when the request names none.
    public static let defaultPageSize = 500
    /// The largest page fetch-data returns, whatever the request asks for.
    public static let maximumPageSize = 5000
    /// The most bytes of JSON a fetch-data page holds: it stops before a change that would take
    /// it past them, unless that change comes first (a page always holds at least one), and
    /// says `has_more`.
    public static let maximumPageBytes = 4 * 1024 * 1024
    /// The largest request body a server takes by default; a larger one is answered 413
    /// `payload_too_large`.
    public static let defaultBodyLimit = 4 * 1024 * 1024
}
