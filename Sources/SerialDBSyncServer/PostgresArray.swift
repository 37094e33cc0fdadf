/// Arrays of values in PostgreSQL's text format (`{"a","b",NULL}`), so that one parameter
/// carries the values of a whole upload and one statement (`unnest($1::text[], ...)`) reads or
/// writes every row of it. The values are still bound, never part of the SQL.
/// See <https://www.postgresql.org/docs/15/arrays.html#ARRAYS-IO>.
enum PostgresArray {
    /// Text values: each quoted, with `"` and `\` escaped by a backslash.
    static func text(_ values: [String?]) -> String {
        var literal = "{"
        literal.reserveCapacity(2 + values.reduce(0) { $0 + ($1?.utf8.count ?? 4) + 3 })
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            guard let value else {
                literal += "NULL"
                continue
            }
            literal += "\""
            for character in value.unicodeScalars {
                if character == "\"" || character == "\\" { literal.unicodeScalars.append("\\") }
                literal.unicodeScalars.append(character)
            }
            literal += "\""
        }
        return literal + "}"
    }

    /// Whole numbers.
    static func bigint(_ values: [Int64?]) -> String {
        "{" + values.map { $0.map(String.init) ?? "NULL" }.joined(separator: ",") + "}"
    }

    /// Booleans.
    static func boolean(_ values: [Bool?]) -> String {
        "{" + values.map { $0.map { $0 ? "t" : "f" } ?? "NULL" }.joined(separator: ",") + "}"
    }
}
