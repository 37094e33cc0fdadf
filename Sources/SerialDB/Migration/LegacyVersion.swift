/// Where a database that predates SerialDB kept its schema version, so that
/// ``DatabaseMigrator/adoptLegacyVersion(_:)`` can take it over without re-running old steps.
public enum LegacyVersion: Sendable, Equatable {
    /// `PRAGMA user_version`. See <https://www.sqlite.org/pragma.html#pragma_user_version>.
    case userVersion
    /// An integer column of a one-row table, such as `t_info(version)`. A missing table counts
    /// as version 0 (a fresh database).
    case table(String, column: String)
}
