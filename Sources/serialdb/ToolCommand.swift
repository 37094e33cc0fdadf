import Foundation
import SerialDB
import ToolArguments

/// One parsed invocation of the tool.
struct ToolCommand {
    enum Verb: String {
        case inspect, plan, migrate, check
    }

    let verb: Verb
    let path: String
    let schemaFile: String?
    let options: SchemaChangeOptions

    /// Reads `VERB DB [options]`; options may come before, between or after the operands.
    /// - Throws: ``UsageError`` naming what is wrong.
    init(_ reader: inout ArgumentReader) throws {
        var operands: [String] = []
        var schemaFile: String?
        var options = SchemaChangeOptions()
        while let argument = try reader.next() {
            switch argument {
            case .operand(let word): operands.append(word)
            case .option("--schema"): schemaFile = try reader.value()
            case .option("--rename"):
                let (table, column, new) = try Self.split(try reader.value(), flag: "--rename", value: "NEW")
                guard !new.isEmpty else { throw UsageError("--rename wants TABLE.OLD=NEW: the new name is empty") }
                options.renameColumn(column, to: new, inTable: table)
            case .option("--rename-table"):
                let value = try reader.value()
                let parts = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw UsageError("--rename-table wants OLD=NEW, got `\(value)`")
                }
                options.renameTable(String(parts[0]), to: String(parts[1]))
            case .option("--allow-drop"):
                let value = try reader.value()
                let parts = value.split(separator: ".", maxSplits: 1).map(String.init)
                if parts.count == 2 {
                    options.allowDropping(column: parts[1], inTable: parts[0])
                } else {
                    options.allowDropping(table: value)
                }
            case .option("--convert"):
                let value = try reader.value()
                let parts = value.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                    throw UsageError("--convert wants TABLE.COLUMN, got `\(value)`")
                }
                options.allowConverting(column: parts[1], inTable: parts[0])
            case .option("--fill"):
                let (table, column, text) = try Self.split(try reader.value(), flag: "--fill", value: "VALUE")
                options.fill(column: column, inTable: table, with: try FillValue.read(text, for: "\(table).\(column)"))
            default: throw reader.unexpected(argument)
            }
        }
        guard let word = operands.first else { throw UsageError("no command given") }
        guard let verb = Verb(rawValue: word) else { throw UsageError("unknown command `\(word)`") }
        guard operands.count >= 2 else { throw UsageError("\(word) needs a database path") }
        guard operands.count == 2 else { throw UsageError("unexpected argument `\(operands[2])`") }
        if (verb == .plan || verb == .migrate) && schemaFile == nil {
            throw UsageError("\(word) needs --schema FILE")
        }
        self.verb = verb
        self.path = operands[1]
        self.schemaFile = schemaFile
        self.options = options
    }

    /// `TABLE.COLUMN=VALUE` into its three parts; VALUE may be empty, the names may not.
    private static func split(_ text: String, flag: String, value: String) throws -> (String, String, String) {
        let sides = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let names = sides.first?.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false) ?? []
        guard sides.count == 2, names.count == 2, !names[0].isEmpty, !names[1].isEmpty else {
            throw UsageError("\(flag) wants TABLE.COLUMN=\(value), got `\(text)`")
        }
        return (String(names[0]), String(names[1]), sides[1])
    }

    func run() throws -> Int32 {
        guard verb == .migrate || FileManager.default.fileExists(atPath: path) else {
            throw UsageError("no database at \(path)")
        }
        if let schemaFile, !FileManager.default.isReadableFile(atPath: schemaFile) {
            throw UsageError("no readable schema file at \(schemaFile)")
        }
        var configuration = Configuration()
        configuration.readOnly = verb != .migrate
        configuration.label = "serialdb"
        configuration.journalMode = nil  // a tool leaves the file's journal mode alone
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        switch verb {
        case .inspect:
            print(try queue.read { db in SchemaReport(try db.schema()).text })
            return 0
        case .check:
            return try check(queue)
        case .plan, .migrate:
            let schema = try String(contentsOfFile: schemaFile ?? "", encoding: .utf8)
            let plan = try queue.inDatabase { db in try db.planSchemaChange(to: schema, options: options) }
            print(plan.isEmpty ? "-- nothing to do: the database already has this schema" : plan.sql)
            if plan.isRefused {
                FileHandle.standardError.write(Data(plan.refusals.map { "refused: \($0)\n" }.joined().utf8))
                return 3
            }
            guard verb == .migrate, !plan.isEmpty else { return 0 }
            let bar = ProgressBar()
            try queue.inDatabase { db in try db.applySchemaChange(plan) { done, total in bar.show(done, of: total) } }
            bar.finish()
            print("-- applied \(plan.steps.count) step(s)")
            return 0
        }
    }

    private func check(_ queue: DatabaseQueue) throws -> Int32 {
        let (integrity, violations) = try queue.read { db in
            (
                try db.fetchAll(String.self, sql: "PRAGMA integrity_check"),
                try db.fetchAll(Row.self, sql: "PRAGMA foreign_key_check")
            )
        }
        print("integrity: " + integrity.joined(separator: "\n  "))
        for row in violations {
            let table: String = try row.decode(at: 0)
            let parent: String = try row.decode(at: 2)
            print("foreign key: row \(row[1]) of \(table) refers to a missing row of \(parent)")
        }
        print("foreign keys: \(violations.isEmpty ? "ok" : "\(violations.count) broken reference(s)")")
        return integrity == ["ok"] && violations.isEmpty ? 0 : 1
    }
}
