import Foundation

/// A SQL function written in Swift, for ``Database/add(function:)``.
///
/// ```swift
/// let slug = DatabaseFunction("slug", argumentCount: 1, deterministic: true) { arguments in
///     guard case .text(let text) = arguments[0] else { return nil }   // NULL in, NULL out
///     return text.lowercased().replacingOccurrences(of: " ", with: "-")
/// }
/// var config = Configuration()
/// config.prepareDatabase = { db in try db.add(function: slug) }   // every connection
/// ```
///
/// An error thrown by the closure becomes the SQL statement's error, with the error's
/// description as SQLite's message. See <https://www.sqlite.org/c3ref/create_function.html>.
public struct DatabaseFunction: Sendable {
    /// The name SQL calls it by (case-insensitive for ASCII letters, as SQLite compares names).
    public let name: String
    /// How many arguments it takes; `nil` accepts any number.
    public let argumentCount: Int?
    /// Whether the same arguments always give the same result. Only deterministic functions may
    /// appear in index expressions, CHECK constraints and generated columns, and SQLite may
    /// compute them once per statement.
    public let isDeterministic: Bool
    let body: @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?

    /// Describes a function.
    ///
    /// - Parameters:
    ///   - name: the SQL name.
    ///   - argumentCount: the number of arguments, 0...127, or `nil` for any number.
    ///   - deterministic: whether equal arguments always give equal results.
    ///   - body: computes the result from the arguments; returning `nil` gives SQL NULL.
    public init(
        _ name: String, argumentCount: Int? = nil, deterministic: Bool = false,
        _ body: @escaping @Sendable ([DatabaseValue]) throws -> (any DatabaseValueConvertible)?
    ) {
        self.name = name
        self.argumentCount = argumentCount
        self.isDeterministic = deterministic
        self.body = body
    }
}

/// A collating sequence written in Swift, for ``Database/add(collation:)``: SQL names it in
/// `COLLATE name`, in column definitions, indexes and `ORDER BY`.
///
/// ```swift
/// let caseless = DatabaseCollation("caseless") { a, b in a.compare(b, options: .caseInsensitive) }
/// try db.add(collation: caseless)
/// let names = try db.fetchAll(String.self, sql: "SELECT name FROM player ORDER BY name COLLATE caseless")
/// ```
///
/// The comparison must be a total order that never changes for a given pair of strings: an index
/// built with it is only as consistent as it is. See
/// <https://www.sqlite.org/c3ref/create_collation.html>.
public struct DatabaseCollation: Sendable {
    /// The name used in `COLLATE name`.
    public let name: String
    let compare: @Sendable (String, String) -> ComparisonResult

    /// Describes a collation.
    ///
    /// - Parameters:
    ///   - name: the name used in `COLLATE name`.
    ///   - compare: orders two strings (both decoded from UTF-8).
    public init(_ name: String, _ compare: @escaping @Sendable (String, String) -> ComparisonResult) {
        self.name = name
        self.compare = compare
    }
}
