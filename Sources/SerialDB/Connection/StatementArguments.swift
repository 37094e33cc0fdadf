import CSQLite

/// Values for the parameters of a statement: positional (`?`, `?NNN`) from an array literal,
/// or named (`:name`, `@name`, `$name`) from a dictionary literal.
///
/// ```swift
/// try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Ann", 10])
/// try db.execute(sql: "UPDATE player SET score = :score WHERE name = :name",
///                arguments: ["name": "Ann", "score": 11])
/// ```
///
/// Values are always bound, never spliced into SQL.
/// See <https://www.sqlite.org/lang_expr.html#varparam>.
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    var positional: [(any DatabaseValueConvertible)?]
    var named: [String: (any DatabaseValueConvertible)?]

    /// Positional arguments, in parameter order.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        positional = values
        named = [:]
    }

    /// Named arguments; keys are parameter names without their `:`, `@` or `$` prefix.
    public init(named values: [String: (any DatabaseValueConvertible)?]) {
        positional = []
        named = values
    }

    /// Positional arguments from an array literal.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    /// Named arguments from a dictionary literal.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        var values: [String: (any DatabaseValueConvertible)?] = [:]
        for (key, value) in elements {
            values[key] = value
        }
        self.init(named: values)
    }

    /// Whether there is no value at all.
    public var isEmpty: Bool { positional.isEmpty && named.isEmpty }

    /// The values rendered as SQL literals, for error messages that opted in.
    var rendered: String {
        if !named.isEmpty {
            let pairs = named.keys.sorted().map { key in "\(key): \((named[key] ?? nil)?.databaseValue ?? .null)" }
            return "[" + pairs.joined(separator: ", ") + "]"
        }
        return "[" + positional.map { ($0?.databaseValue ?? .null).description }.joined(separator: ", ") + "]"
    }
}
