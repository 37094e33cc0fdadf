/// One lexical token of SQL text, as far as SerialDB needs to understand SQL: enough to
/// compare two definitions while ignoring case, quoting, whitespace and comments, and to find
/// the parts of a CREATE TABLE statement. SQLite does the real parsing: both sides of a
/// comparison come from `sqlite_master` after SQLite accepted them.
struct SQLToken: Equatable {
    enum Kind: Equatable {
        /// A bare word or a quoted identifier: compared without quotes, ASCII letters case-insensitively.
        case word
        /// A string literal: compared exactly.
        case string
        /// A number or blob literal.
        case literal
        /// Punctuation and operators.
        case symbol
    }

    let kind: Kind
    /// For words, the identifier without quotes, ASCII letters lowercased (`sqliteFolded`); for the others, the text.
    let normalized: String
    /// Where the token stands in the original text.
    let range: Range<String.Index>

    /// Whether this is the bare or quoted word `word` (lowercase).
    func isWord(_ word: String) -> Bool {
        kind == .word && normalized == word
    }

    /// Whether this is the symbol `symbol`.
    func isSymbol(_ symbol: String) -> Bool {
        kind == .symbol && normalized == symbol
    }

    /// The comparison key: kind plus normalized text.
    var key: String {
        switch kind {
        case .word: return "w:" + normalized
        case .string: return "s:" + normalized
        case .literal: return "l:" + normalized
        case .symbol: return normalized
        }
    }
}

/// Splits SQL text into tokens, dropping whitespace and comments.
/// See <https://www.sqlite.org/lang_keywords.html> for the quoting rules.
enum SQLTokenizer {
    static func tokenize(_ sql: String) -> [SQLToken] {
        var tokens: [SQLToken] = []
        var index = sql.startIndex
        func peek(_ offset: Int = 0) -> Character? {
            var position = index
            for _ in 0..<offset {
                guard position < sql.endIndex else { return nil }
                position = sql.index(after: position)
            }
            return position < sql.endIndex ? sql[position] : nil
        }
        while index < sql.endIndex {
            let character = sql[index]
            let start = index
            if character.isASCII && character.isWhitespace {
                index = sql.index(after: index)
            } else if character == "-" && peek(1) == "-" {
                while index < sql.endIndex && sql[index] != "\n" { index = sql.index(after: index) }
            } else if character == "/" && peek(1) == "*" {
                index = sql.index(index, offsetBy: 2)
                while index < sql.endIndex && !(sql[index] == "*" && peek(1) == "/") { index = sql.index(after: index) }
                index = index < sql.endIndex ? sql.index(index, offsetBy: 2) : index
            } else if character == "'" {
                let (text, end) = quoted(sql, from: index, closer: "'")
                index = end
                tokens.append(SQLToken(kind: .string, normalized: text, range: start..<end))
            } else if character == "\"" || character == "`" || character == "[" {
                let closer: Character = character == "[" ? "]" : character
                let (text, end) = quoted(sql, from: index, closer: closer)
                index = end
                tokens.append(SQLToken(kind: .word, normalized: text.sqliteFolded, range: start..<end))
            } else if (character == "x" || character == "X") && peek(1) == "'" {
                index = sql.index(after: index)
                let (text, end) = quoted(sql, from: index, closer: "'")
                index = end
                tokens.append(SQLToken(kind: .literal, normalized: "x'" + text.sqliteFolded + "'", range: start..<end))
            } else if isIdentifierStart(character) {
                while index < sql.endIndex
                    && (isIdentifierStart(sql[index]) || sql[index].isNumber || sql[index] == "$")
                {
                    index = sql.index(after: index)
                }
                tokens.append(
                    SQLToken(kind: .word, normalized: String(sql[start..<index]).sqliteFolded, range: start..<index))
            } else if character.isASCII && character.isNumber || (character == "." && (peek(1)?.isNumber ?? false)) {
                while index < sql.endIndex
                    && (sql[index].isNumber || sql[index].isLetter || sql[index] == "."
                        || ((sql[index] == "+" || sql[index] == "-") && "eE".contains(sql[sql.index(before: index)])))
                {
                    index = sql.index(after: index)
                }
                tokens.append(
                    SQLToken(kind: .literal, normalized: String(sql[start..<index]).sqliteFolded, range: start..<index))
            } else {
                let pair = String(character) + (peek(1).map(String.init) ?? "")
                let length = ["||", "<=", ">=", "!=", "<>", "==", "<<", ">>", "->"].contains(pair) ? 2 : 1
                index = sql.index(index, offsetBy: length)
                tokens.append(SQLToken(kind: .symbol, normalized: String(sql[start..<index]), range: start..<index))
            }
        }
        return tokens
    }

    /// SQLite's tokenizer takes ASCII letters, `_` and every non-ASCII character as part of an
    /// identifier, so `items☕` is one name and `ä1` too.
    /// See `sqlite3IsIdChar` in <https://www.sqlite.org/src/file?name=src/tokenize.c>.
    private static func isIdentifierStart(_ character: Character) -> Bool {
        character.isASCII ? (character.isLetter || character == "_") : true
    }

    /// Reads a quoted run starting at the opening quote; a doubled closer stands for itself.
    private static func quoted(_ sql: String, from start: String.Index, closer: Character) -> (String, String.Index) {
        var text = ""
        var index = sql.index(after: start)
        while index < sql.endIndex {
            if sql[index] == closer {
                let next = sql.index(after: index)
                if closer != "]" && next < sql.endIndex && sql[next] == closer {
                    text.append(closer)
                    index = sql.index(after: next)
                    continue
                }
                return (text, next)
            }
            text.append(sql[index])
            index = sql.index(after: index)
        }
        return (text, index)
    }

    /// The comparison form of a whole statement.
    static func normalized(_ sql: String) -> [String] {
        tokenize(sql).map(\.key)
    }
}
