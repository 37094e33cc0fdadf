import Foundation
import SerialDB
import ToolArguments

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
               serialdb sync DB --server URL --token T [--page-size ROWS]
                                                            sync the file's tables with a sync server
               serialdb -h | --help                         this help
        options (--flag VALUE or --flag=VALUE):
               --rename TABLE.OLD=NEW       keep a column's data under a new name
               --rename-table OLD=NEW       keep a table's data under a new name
               --allow-drop TABLE[.COLUMN]  allow dropping a table or column that holds data
               --fill TABLE.COLUMN=VALUE    value for existing rows of a new NOT NULL column
               --convert TABLE.COLUMN       allow a type change that alters stored values ('0042' → 42)
        a --fill VALUE is an SQL literal, stored with the type SQL gives it: 'text' ('' is the
        empty text, 'it''s' has a quote), 42, -1.5, 1e3, 0x1F, NULL, TRUE, FALSE, X'00FF'.
        A single other word (letters, digits, _) is that text: --fill player.team=none.
        Quote the whole option for the shell: --fill "player.team='red team'".
        exit status: 0 ok, 1 failed, 2 usage error, 3 refused (nothing changed)
        """

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "sync" {
            let sync = ToolArguments.parse(tool: "serialdb", Array(arguments.dropFirst()), usage: usage) { reader in
                try SyncCommand(&reader)
            }
            sync.run()
        }
        let command = ToolArguments.parse(tool: "serialdb", arguments, usage: usage) { reader in
            try ToolCommand(&reader)
        }
        do {
            exit(try command.run())
        } catch let error as UsageError {
            ToolArguments.exitForUsage(tool: "serialdb", error)
        } catch let error as SerialDBError
            where error.code == .schemaChangeRefused || error.code == .foreignKeyViolation
        {
            // Both roll the whole change back: refused, nothing changed.
            FileHandle.standardError.write(Data("serialdb: refused: \(error)\n".utf8))
            exit(3)
        } catch {
            FileHandle.standardError.write(Data("serialdb: \(error)\n".utf8))
            exit(ToolArguments.failure)
        }
    }
}
