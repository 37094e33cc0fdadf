extension String {
    /// The string as a quoted SQL identifier: wrapped in double quotes, inner double quotes
    /// doubled. This is the one way SerialDB puts a table, column, index or savepoint name into
    /// SQL; values never go into SQL text, they are bound.
    ///
    /// ```swift
    /// "my \"odd\" table".quotedDatabaseIdentifier   // "my ""odd"" table"
    /// ```
    ///
    /// See <https://www.sqlite.org/lang_keywords.html>.
    public var quotedDatabaseIdentifier: String {
        "\"" + replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
