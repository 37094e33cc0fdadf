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
    /// How the values are held. `.values` is the fast path for values that already are
    /// ``DatabaseValue``s: each is bound by a switch on its case, where a boxed value costs a
    /// copy of its existential and a dynamic call, and an array of `DatabaseValue` passed as
    /// `[(any DatabaseValueConvertible)?]` costs a conversion of every element first.
    enum Storage: Sendable {
        case positional([(any DatabaseValueConvertible)?])
        case values([DatabaseValue])
        case named([String: (any DatabaseValueConvertible)?])
    }

    var storage: Storage

    /// Positional arguments, in parameter order.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        storage = .positional(values)
    }

    /// Positional arguments that are already ``DatabaseValue``s, in parameter order: the
    /// cheapest way to bind a row of values read from a database or converted by hand, because
    /// no value is boxed on the way.
    public init(_ values: [DatabaseValue]) {
        storage = .values(values)
    }

    /// Named arguments; keys are parameter names without their `:`, `@` or `$` prefix.
    public init(named values: [String: (any DatabaseValueConvertible)?]) {
        storage = .named(values)
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

    /// The positional values, boxed (empty for named arguments): for the paths that split
    /// arguments between statements or render them, not for binding.
    var positional: [(any DatabaseValueConvertible)?] {
        switch storage {
        case .positional(let values): return values
        case .values(let values): return values.map { $0 }
        case .named: return []
        }
    }

    /// The named values (empty for positional arguments).
    var named: [String: (any DatabaseValueConvertible)?] {
        if case .named(let values) = storage { return values }
        return [:]
    }

    /// Whether there is no value at all.
    public var isEmpty: Bool {
        switch storage {
        case .positional(let values): return values.isEmpty
        case .values(let values): return values.isEmpty
        case .named(let values): return values.isEmpty
        }
    }

    /// The values rendered as SQL literals, for error messages that opted in.
    var rendered: String {
        if !named.isEmpty {
            let pairs = named.keys.sorted().map { key in "\(key): \((named[key] ?? nil)?.databaseValue ?? .null)" }
            return "[" + pairs.joined(separator: ", ") + "]"
        }
        return "[" + positional.map { ($0?.databaseValue ?? .null).description }.joined(separator: ", ") + "]"
    }
}
