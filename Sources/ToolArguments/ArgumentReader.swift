/// Reads a command line the one way every SerialDB executable does:
///
/// - an option's value follows it (`--rows 10`) or is joined to it by `=` (`--rows=10`); a
///   value in the next argument may not start with `--` nor be `-h`, so `--token --port 1`
///   is a missing token rather than a token named `--port` (write `--token=--port` for that);
/// - an option that takes no value refuses one (`--quick=yes`);
/// - `-h` and `--help` ask for the usage wherever they are before `--`, whatever else the
///   line holds (see ``asksForHelp``);
/// - `--` ends the options: every argument after it is an operand;
/// - any other argument that starts with `-` (and is not `-` alone) is an option.
///
/// A tool pulls the arguments one by one, so one option is one `case`:
///
/// ```swift
/// var reader = ArgumentReader(arguments)
/// while let argument = try reader.next() {
///     switch argument {
///     case .option("--config"): configPath = try reader.value()
///     case .option("--port"): port = try reader.value("a port number 0-65535") { UInt16($0) }
///     case .option("--quick"): quick = true
///     default: throw reader.unexpected(argument)
///     }
/// }
/// ```
public struct ArgumentReader {
    /// One argument: an option by its name (`--rows`, without any `=value`), or an operand.
    public enum Argument: Equatable, Sendable, CustomStringConvertible {
        /// An option such as `--rows`; its value, if it takes one, comes from ``value()``.
        case option(String)
        /// Anything else: a command word, a path.
        case operand(String)

        /// The argument as written (the option without its `=value`).
        public var description: String {
            switch self {
            case .option(let name), .operand(let name): return name
            }
        }
    }

    /// The flags that ask for the usage.
    public static let helpFlags: Set<String> = ["-h", "--help"]

    /// Whether `-h` or `--help` is among the arguments before `--`: the tool prints its usage
    /// and succeeds instead of reading the rest. ``next()`` skips them.
    public let asksForHelp: Bool

    private var remaining: ArraySlice<String>
    private var optionsEnded = false
    /// The option returned last, with the value joined to it by `=`, if any.
    private var current: (name: String, inlineValue: String?)?

    /// A reader of `arguments`, the program name left out.
    public init(_ arguments: [String]) {
        remaining = arguments[...]
        asksForHelp = arguments.prefix { $0 != "--" }.contains { Self.helpFlags.contains($0) }
    }

    /// The next argument, or `nil` after the last one.
    ///
    /// - Throws: ``UsageError`` when the option returned before was given a value with `=`
    ///   that it did not read (it takes none).
    public mutating func next() throws -> Argument? {
        if let current, let value = current.inlineValue {
            throw UsageError("\(current.name) takes no value, not `\(value)`")
        }
        current = nil
        while let argument = remaining.popFirst() {
            if optionsEnded { return .operand(argument) }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if Self.helpFlags.contains(argument) { continue }
            guard argument.hasPrefix("-"), argument != "-" else { return .operand(argument) }
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                let name = String(argument[..<equals])
                current = (name, String(argument[argument.index(after: equals)...]))
                return .option(name)
            }
            current = (argument, nil)
            return .option(argument)
        }
        return nil
    }

    /// The value of the option ``next()`` returned last: what followed its `=`, or the next
    /// argument.
    ///
    /// - Throws: ``UsageError`` "--flag needs a value" when there is none.
    public mutating func value() throws -> String {
        guard let option = current else { throw UsageError("a value was read where no option was given") }
        if let inline = option.inlineValue {
            current = (option.name, nil)
            return inline
        }
        guard let next = remaining.first, !next.hasPrefix("--"), next != "-h" else {
            throw UsageError("\(option.name) needs a value")
        }
        remaining.removeFirst()
        return next
    }

    /// The value of the option ``next()`` returned last, converted by `convert`.
    ///
    /// To set an optional, read into a constant of the plain type first
    /// (`let seconds: Double = try reader.value(...)`): otherwise Swift may take `T` to be the
    /// optional itself, and a value `convert` refuses becomes `nil` instead of an error.
    ///
    /// - Parameters:
    ///   - expected: what the value must be, for the error: "a port number 0-65535".
    ///   - convert: the value, or `nil` when the text is not one.
    /// - Throws: ``UsageError`` "--port needs a port number 0-65535, not `x`".
    public mutating func value<T>(_ expected: String, _ convert: (String) throws -> T?) throws -> T {
        let name = current?.name ?? "the option"
        let text = try value()
        guard let converted = try convert(text) else { throw UsageError("\(name) needs \(expected), not `\(text)`") }
        return converted
    }

    /// The value of the option ``next()`` returned last, as a whole number of at least `minimum`.
    public mutating func wholeNumber<T: FixedWidthInteger>(atLeast minimum: T) throws -> T {
        try value("a whole number of at least \(minimum)") { text in T(text).flatMap { $0 >= minimum ? $0 : nil } }
    }

    /// The options of a command line made only of `--name value` pairs (one a program writes
    /// for a child process of its own), by name; a later pair wins.
    ///
    /// - Throws: ``UsageError`` for an operand or an option without a value.
    public static func optionValues(_ arguments: [String]) throws -> [String: String] {
        var reader = ArgumentReader(arguments)
        var values: [String: String] = [:]
        while let argument = try reader.next() {
            guard case .option(let name) = argument else { throw reader.unexpected(argument) }
            values[name] = try reader.value()
        }
        return values
    }

    /// The error for an argument the tool does not take: "unknown option `--x`" or
    /// "unexpected argument `x`".
    public func unexpected(_ argument: Argument) -> UsageError {
        switch argument {
        case .option(let name): return UsageError("unknown option `\(name)`")
        case .operand(let word): return UsageError("unexpected argument `\(word)`")
        }
    }
}
