/// What SQLite does to a value stored into a column, by the column's declared type and its
/// table's strictness: the type affinity of an ordinary table, the type check of a STRICT one.
/// Two columns with the same conversion store every value alike, so a copy between them
/// changes nothing; otherwise ``convertedSQL(_:)`` computes, in SQL, the value the copy
/// would store. See <https://www.sqlite.org/datatype3.html#type_affinity> and
/// <https://www.sqlite.org/stricttables.html>.
enum StoredValueConversion: Equatable {
    /// BLOB affinity (no declared type, or one naming BLOB), or `ANY` in a STRICT table:
    /// every value is stored as it is.
    case none
    /// TEXT affinity: numbers become text.
    case text
    /// NUMERIC or INTEGER affinity: well-formed numeric text becomes a number, integral reals
    /// integers.
    case numeric
    /// REAL affinity: well-formed numeric text and integers become reals.
    case real
    /// A STRICT column (or a rowid alias): the affinity applies, then a value of another
    /// storage class than `accepted` is an error.
    indirect case strict(StoredValueConversion, accepted: Set<String>)

    init(declaredType: String, strict: Bool, isRowIDAlias: Bool = false) {
        let type = declaredType.uppercased()
        if isRowIDAlias {
            self = .strict(.numeric, accepted: ["integer"])
        } else if strict {
            switch type {
            case "INT", "INTEGER": self = .strict(.numeric, accepted: ["integer"])
            case "REAL": self = .strict(.real, accepted: ["real"])
            case "TEXT": self = .strict(.text, accepted: ["text"])
            case "BLOB": self = .strict(.none, accepted: ["blob"])
            default: self = .none  // ANY
            }
        } else if type.contains("INT") {
            self = .numeric
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.isEmpty || type.contains("BLOB") {
            self = .none
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// The value stored for `value` (an SQL expression reading a column). Numeric text is
    /// told by SQLite itself: comparing `CAST(v AS NUMERIC)`, which has NUMERIC affinity, with
    /// `v` applies that affinity to `v`, which converts exactly the text an insert converts.
    func convertedSQL(_ value: String) -> String {
        let isNumericText = "typeof(\(value)) = 'text' AND CAST(\(value) AS NUMERIC) = \(value)"
        switch self {
        case .none: return value
        case .text:
            return "CASE WHEN typeof(\(value)) IN ('integer', 'real') THEN CAST(\(value) AS TEXT) ELSE \(value) END"
        case .numeric:
            return "CASE WHEN \(isNumericText) THEN CAST(\(value) AS NUMERIC) "
                + "WHEN typeof(\(value)) = 'real' AND \(value) = CAST(\(value) AS INTEGER) THEN CAST(\(value) AS INTEGER) "
                + "ELSE \(value) END"
        case .real:
            return "CASE WHEN \(isNumericText) OR typeof(\(value)) = 'integer' THEN CAST(\(value) AS REAL) "
                + "ELSE \(value) END"
        case .strict(let affinity, _): return affinity.convertedSQL(value)
        }
    }

    /// A condition true where storing `value` fails (a STRICT column refusing its class).
    func refusesSQL(_ value: String) -> String? {
        guard case .strict(_, let accepted) = self else { return nil }
        let classes = accepted.sorted().map { "'\($0)'" }.joined(separator: ", ")
        return "typeof(\(convertedSQL(value))) NOT IN ('null', \(classes))"
    }

    /// A condition true where the stored value differs from `value`: read back as the class
    /// `value` had, it is not the same value. An integer that becomes text `'42'` is the same
    /// value; `'0042'` that becomes `42`, or `0.1 + 0.2` that becomes `'0.3'`, is not.
    func altersSQL(_ value: String) -> String {
        let new = convertedSQL(value)
        return """
            \(value) IS NOT NULL AND NOT (CASE typeof(\(value)) \
            WHEN 'integer' THEN CAST(\(new) AS INTEGER) IS \(value) AND (typeof(\(new)) <> 'real' OR \(new) = \(value)) \
            WHEN 'real' THEN CAST(\(new) AS REAL) IS \(value) \
            WHEN 'text' THEN CAST(\(new) AS TEXT) IS \(value) COLLATE BINARY \
            ELSE \(new) IS \(value) END)
            """
    }

    /// How the declared type reads in a message.
    static func describe(_ type: String, strict: Bool) -> String {
        (type.isEmpty ? "no type" : type) + (strict ? " (STRICT)" : "")
    }
}
