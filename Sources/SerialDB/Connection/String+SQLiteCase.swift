extension String {
    /// The name as SQLite compares identifiers: ASCII letters folded to lowercase and every
    /// other character kept as it is, so `"Ä"` and `"ä"` stay two names while `Name` and `name`
    /// are one. Swift's `lowercased()` folds all of Unicode and would merge names SQLite keeps
    /// apart. See <https://www.sqlite.org/lang_keywords.html> and `sqlite3StrICmp`.
    public var sqliteFolded: String {
        var scalars = String.UnicodeScalarView()
        for scalar in unicodeScalars {
            if scalar.value >= 0x41 && scalar.value <= 0x5A, let lower = Unicode.Scalar(scalar.value + 0x20) {
                scalars.append(lower)
            } else {
                scalars.append(scalar)
            }
        }
        return String(scalars)
    }

    /// Whether two names are the same name for SQLite (ASCII case folding only).
    func isSameSQLiteName(as other: String) -> Bool {
        sqliteFolded == other.sqliteFolded
    }
}
