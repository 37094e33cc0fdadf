import Foundation

/// The exit statuses and messages every SerialDB executable shares: 0 for success (`--help`
/// included, its usage on standard output), 1 for a failure, 2 for a command line it cannot
/// run, with one line on standard error that names the problem and points to `--help`.
public enum ToolArguments {
    /// Success, also after printing the usage for `-h` or `--help`.
    public static let success: Int32 = 0
    /// The work failed.
    public static let failure: Int32 = 1
    /// The command line cannot run.
    public static let usageStatus: Int32 = 2

    /// Parses `arguments` with `parse`, or ends the process: after printing `usage` to standard
    /// output when they hold `-h` or `--help` (status 0, whatever else they hold), or after
    /// printing the ``UsageError`` that `parse` threw (status 2).
    ///
    /// - Parameters:
    ///   - tool: the program name, for messages: "serialdb".
    ///   - arguments: the arguments, the program name left out.
    ///   - usage: the text `--help` prints.
    ///   - parse: reads the arguments; throws ``UsageError`` for a mistake.
    public static func parse<T>(
        tool: String, _ arguments: [String] = Array(CommandLine.arguments.dropFirst()), usage: String,
        _ parse: (inout ArgumentReader) throws -> T
    ) -> T {
        var reader = ArgumentReader(arguments)
        if reader.asksForHelp {
            print(usage)
            exit(success)
        }
        do {
            return try parse(&reader)
        } catch let error as UsageError {
            exitForUsage(tool: tool, error)
        } catch {
            exitForUsage(tool: tool, UsageError("\(error)"))
        }
    }

    /// Prints "TOOL: MESSAGE" and a pointer to `--help` on standard error, and exits with 2.
    public static func exitForUsage(tool: String, _ error: UsageError) -> Never {
        FileHandle.standardError.write(Data(usageErrorText(tool: tool, error).utf8))
        exit(usageStatus)
    }

    /// What ``exitForUsage(tool:_:)`` prints.
    public static func usageErrorText(tool: String, _ error: UsageError) -> String {
        "\(tool): \(error.message)\nRun `\(tool) --help` for the usage.\n"
    }
}
