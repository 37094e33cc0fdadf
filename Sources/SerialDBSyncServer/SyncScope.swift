/// Who sees a synced table's rows.
public enum SyncScope: String, Sendable, Equatable {
    /// Each account reads and writes only its own rows; two accounts may use the same key.
    case account
    /// Every account reads the rows; none writes them through the sync API.
    case global
}
