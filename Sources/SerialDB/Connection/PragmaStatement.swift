/// A `PRAGMA` statement read far enough to tell a query from an assignment, for read-only
/// blocks. See <https://www.sqlite.org/pragma.html#syntax>.
struct PragmaStatement {
    /// The pragma's name, lowercased, without its schema.
    let name: String
    /// The text of the value after `=` or inside parentheses, if any.
    let argument: String?

    /// Pragmas whose argument names what to report on (`table_info(player)`), so that giving
    /// one is still a query: those SQLite marks "acts as query when it has one argument".
    private static let queryArgumentPragmas: Set<String> = [
        "foreign_key_check", "foreign_key_list", "index_info", "index_list", "index_xinfo", "integrity_check",
        "quick_check", "table_info", "table_list", "table_xinfo",
    ]

    /// Whether the statement only reads: no value, or a value that names what to report on.
    var isQuery: Bool {
        argument == nil || Self.queryArgumentPragmas.contains(name)
    }

    /// Reads `sql`; `nil` unless it is a PRAGMA statement. Other statements cost a look at
    /// their first word, so read-only blocks can call this for every statement.
    init?(sql: String) {
        guard Self.startsWithPragma(sql) else { return nil }
        var tokens = SQLTokenizer.tokenize(sql)[...]
        guard tokens.first?.isWord("pragma") == true else { return nil }
        tokens = tokens.dropFirst()
        if tokens.count >= 3, tokens.dropFirst().first?.isSymbol(".") == true {
            tokens = tokens.dropFirst(2)  // the schema name and its dot
        }
        guard let nameToken = tokens.first, nameToken.kind == .word else { return nil }
        name = nameToken.normalized
        let rest = tokens.dropFirst().filter { !$0.isSymbol(";") && !$0.isSymbol("(") && !$0.isSymbol(")") }
        let value = rest.first?.isSymbol("=") == true ? rest.dropFirst() : rest[...]
        argument = value.isEmpty ? nil : value.map { String(sql[$0.range]) }.joined(separator: " ")
    }

    /// Whether the first word of `sql`, after blanks and comments, is PRAGMA (any case).
    private static func startsWithPragma(_ sql: String) -> Bool {
        var bytes = sql.utf8[...]
        while let byte = bytes.first {
            switch byte {
            case 32, 9, 10, 13:
                bytes = bytes.dropFirst()
            case UInt8(ascii: "-") where bytes.dropFirst().first == UInt8(ascii: "-"):
                bytes = bytes.drop { $0 != 10 }
            case UInt8(ascii: "/") where bytes.dropFirst().first == UInt8(ascii: "*"):
                // Up to the closing */ (or the end); SQLTokenizer reads it properly afterwards.
                bytes = bytes.dropFirst(2)
                while !bytes.isEmpty
                    && !(bytes.first == UInt8(ascii: "*") && bytes.dropFirst().first == UInt8(ascii: "/"))
                {
                    bytes = bytes.dropFirst()
                }
                bytes = bytes.dropFirst(2)
            default:
                // ASCII lowercase, compared lazily: nothing is allocated per statement.
                return bytes.prefix(6).lazy.map { $0 | 0x20 }.elementsEqual("pragma".utf8)
            }
        }
        return false
    }
}
