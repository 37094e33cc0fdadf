/// The type affinity SQLite derives from a column's declared type, which decides how a JSON
/// number or string becomes a column value. See <https://www.sqlite.org/datatype3.html#determination_of_column_affinity>.
public enum ColumnAffinity: Sendable, Equatable {
    /// INTEGER: the declared type contains `INT`.
    case integer
    /// TEXT: `CHAR`, `CLOB` or `TEXT`.
    case text
    /// BLOB (none): `BLOB`, or no declared type.
    case blob
    /// REAL: `REAL`, `FLOA` or `DOUB`.
    case real
    /// NUMERIC: any other declared type.
    case numeric
    /// `ANY` in a STRICT table: the value is kept as sent.
    case any

    /// The affinity of a declared type, by SQLite's rules in their order.
    public init(declaredType: String, isStrict: Bool = false) {
        let type = declaredType.uppercased()
        if isStrict && type == "ANY" {
            self = .any
        } else if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}
