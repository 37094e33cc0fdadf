import Foundation
import SerialDB

/// `serialdb`: inspect a database, plan a schema change as a dry run, apply it, check
/// integrity. Exit codes: 0 success, 1 failure (SQLite error, integrity problem), 2 usage
/// error, 3 schema change refused (nothing was changed).
@main
struct SerialDBTool {
    static let usage = """
        usage: serialdb inspect DB
               serialdb plan DB --schema FILE [options]     dry run: the steps, their SQL, what is refused
               serialdb migrate DB --schema FILE [options]  apply the change in one transaction
               serialdb check DB                            integrity and foreign keys
               serialdb sync DB --server URL --token T      sync the file's tables with a sync server
               serialdb -h | --help                         this help
        options:
               --rename TABLE.OLD=NEW       keep a column's data under a new name
               --rename-table OLD=NEW       keep a table's data under a new name
               --allow-drop TABLE[.COLUMN]  allow dropping a table or column that holds data
               --fill TABLE.COLUMN=VALUE    value for existing rows of a new NOT NULL column
               --convert TABLE.COLUMN       allow a type change that alters stored values ('0042' → 42)
        exit status: 0 ok, 1 failed, 2 usage error, 3 refused (nothing changed)
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.contains("--help") || arguments.contains("-h") {
            print(usage)  // asked for: standard output, success
            exit(0)
        }
        if arguments.first == "sync" { SyncCommand.main(Array(arguments.dropFirst())) }
        do {
            let command = try ToolCommand(arguments: arguments)
            exit(try command.run())
        } catch let error as UsageError {
            FileHandle.standardError.write(Data("serialdb: \(error.message)\n\n\(usage)\n".utf8))
            exit(2)
        } catch let error as SerialDBError
            where error.code == .schemaChangeRefused || error.code == .foreignKeyViolation
        {
            // Both roll the whole change back: refused, nothing changed.
            FileHandle.standardError.write(Data("serialdb: refused: \(error)\n".utf8))
            exit(3)
        } catch {
            FileHandle.standardError.write(Data("serialdb: \(error)\n".utf8))
            exit(1)
        }
    }
}

/// A command-line mistake: the message says what is wrong; the usage follows it.
struct UsageError: Error {
    let message: String
}
