import SerialDB
import ToolArguments

/// How `--fill TABLE.COLUMN=VALUE` reads its VALUE: as an SQL literal, which SQLite evaluates,
/// so the rows get the value SQL gives it (`''` is the empty text, `42` an integer, `X'00'` a
/// blob, `NULL` null); or, when it is a single bare word such as `none`, as that text.
///
/// Only a literal reaches SQLite: the text is checked against the literal grammar first, so an
/// expression or a subquery is refused, never run.
/// See <https://www.sqlite.org/lang_expr.html#literal_values_constants_>.
enum FillValue {
    /// Words SQL reads as something else than their text.
    private static let keywords: [String: DatabaseValue?] = [
        "NULL": .null, "TRUE": .integer(1), "FALSE": .integer(0),
        "CURRENT_DATE": nil, "CURRENT_TIME": nil, "CURRENT_TIMESTAMP": nil,
    ]

    /// The value `text` stands for.
    /// - Throws: ``UsageError`` for an empty value, an expression, or a malformed literal.
    static func read(_ text: String, for target: String) throws -> DatabaseValue {
        guard !text.isEmpty else {
            throw UsageError("--fill \(target)= has no value: write '' for the empty text")
        }
        if isBareWord(text) {
            switch keywords[text.uppercased()] {
            case .some(.some(let value)): return value
            case .some(.none):
                throw UsageError(
                    "--fill \(target)=\(text) is an SQL expression, not a value: give the value itself, "
                        + "such as '2024-01-31'")
            case .none: return .text(text)
            }
        }
        guard isLiteral(text) else {
            throw UsageError(
                "--fill \(target)=\(text) is neither an SQL literal nor a single word: write text in single "
                    + "quotes ('a b', 'it''s'), numbers as they are (42, -1.5), NULL, or a blob as X'00FF'")
        }
        do {
            // A literal alone runs nothing but itself.
            let db = try Database(path: ":memory:")
            defer { db.close() }
            return try db.fetchOne(Row.self, sql: "SELECT " + text)?[0] ?? .null
        } catch {
            throw UsageError("--fill \(target)=\(text) is not a value SQLite can read: \(error)")
        }
    }

    /// Letters, digits and `_`, not starting with a digit: `none`, `Köln`, `n_a`.
    private static func isBareWord(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, first == "_" || first.properties.isAlphabetic else {
            return false
        }
        return text.unicodeScalars.allSatisfy { $0 == "_" || $0.properties.isAlphabetic || isDigit($0) }
    }

    /// Whether `text` is one SQL literal: a quoted string, a blob, or a number with an optional
    /// sign (NULL, TRUE and FALSE are words).
    private static func isLiteral(_ text: String) -> Bool {
        let scalars = Array(text.unicodeScalars)
        if scalars.count >= 2, scalars.first == "'", scalars.last == "'" {
            return isQuotedBody(scalars.dropFirst().dropLast())
        }
        if scalars.count >= 3, scalars[0] == "x" || scalars[0] == "X", scalars[1] == "'", scalars.last == "'" {
            return scalars.dropFirst(2).dropLast().allSatisfy { $0.properties.isASCIIHexDigit }
        }
        return isNumber(scalars.first == "-" || scalars.first == "+" ? scalars.dropFirst() : scalars[...])
    }

    /// Inside single quotes, a quote only as a doubled pair.
    private static func isQuotedBody(_ body: ArraySlice<Unicode.Scalar>) -> Bool {
        var index = body.startIndex
        while index < body.endIndex {
            if body[index] == "'" {
                guard index + 1 < body.endIndex, body[index + 1] == "'" else { return false }
                index += 2
            } else {
                index += 1
            }
        }
        return true
    }

    /// `0x1F`, `42`, `1.5`, `.5`, `5.`, `1e10`, `2.5E-3`.
    private static func isNumber(_ scalars: ArraySlice<Unicode.Scalar>) -> Bool {
        if scalars.count > 2, scalars.first == "0", let x = scalars.dropFirst().first, x == "x" || x == "X" {
            return scalars.dropFirst(2).allSatisfy { $0.properties.isASCIIHexDigit }
        }
        var rest = scalars
        let whole = rest.prefix(while: isDigit)
        rest = rest.dropFirst(whole.count)
        var fraction: ArraySlice<Unicode.Scalar> = []
        if rest.first == "." {
            rest = rest.dropFirst()
            fraction = rest.prefix(while: isDigit)
            rest = rest.dropFirst(fraction.count)
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return false }
        if let e = rest.first, e == "e" || e == "E" {
            rest = rest.dropFirst()
            if let sign = rest.first, sign == "+" || sign == "-" { rest = rest.dropFirst() }
            let exponent = rest.prefix(while: isDigit)
            guard !exponent.isEmpty else { return false }
            rest = rest.dropFirst(exponent.count)
        }
        return rest.isEmpty
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value >= 0x30 && scalar.value <= 0x39
    }
}
