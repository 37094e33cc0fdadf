import Foundation
import SerialDB

/// One parsed invocation of the tool.
struct ToolCommand {
    enum Verb: String {
        case inspect, plan, migrate, check
    }

    let verb: Verb
    let path: String
    var schemaFile: String?
    var options = SchemaChangeOptions()

    init(arguments: [String]) throws {
        guard arguments.count >= 2, let verb = Verb(rawValue: arguments[0]) else {
            throw UsageError(message: arguments.isEmpty ? "no command given" : "unknown command `\(arguments[0])`")
        }
        self.verb = verb
        path = arguments[1]
        var rest = arguments.dropFirst(2).makeIterator()
        while let flag = rest.next() {
            guard let value = rest.next() else { throw UsageError(message: "\(flag) needs a value") }
            switch flag {
            case "--schema": schemaFile = value
            case "--rename":
                let (table, column, new) = try Self.split(value, flag: flag)
                options.renameColumn(column, to: new, inTable: table)
            case "--rename-table":
                let parts = value.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else {
                    throw UsageError(message: "--rename-table wants OLD=NEW, got `\(value)`")
                }
                options.renameTable(parts[0], to: parts[1])
            case "--allow-drop":
                let parts = value.split(separator: ".", maxSplits: 1).map(String.init)
                if parts.count == 2 {
                    options.allowDropping(column: parts[1], inTable: parts[0])
                } else {
                    options.allowDropping(table: value)
                }
            case "--convert":
                let parts = value.split(separator: ".", maxSplits: 1).map(String.init)
                guard parts.count == 2 else {
                    throw UsageError(message: "--convert wants TABLE.COLUMN, got `\(value)`")
                }
                options.allowConverting(column: parts[1], inTable: parts[0])
            case "--fill":
                let (table, column, text) = try Self.split(value, flag: flag)
                // Bound as text, the value takes the column's type affinity on its way in, as
                // SQLite converts any text: `007` stays "007" in a TEXT column and is 7 in an
                // INTEGER one; `nan` stays text rather than becoming NULL.
                options.fill(column: column, inTable: table, with: text)
            default:
                throw UsageError(message: "unknown option `\(flag)`")
            }
        }
        if (verb == .plan || verb == .migrate) && schemaFile == nil {
            throw UsageError(message: "\(verb.rawValue) needs --schema FILE")
        }
    }

    /// `TABLE.COLUMN=VALUE` into its three parts.
    private static func split(_ text: String, flag: String) throws -> (String, String, String) {
        let sides = text.split(separator: "=", maxSplits: 1).map(String.init)
        let names = sides.first?.split(separator: ".", maxSplits: 1).map(String.init) ?? []
        guard sides.count == 2, names.count == 2 else {
            throw UsageError(message: "\(flag) wants TABLE.COLUMN=VALUE, got `\(text)`")
        }
        return (names[0], names[1], sides[1])
    }

    func run() throws -> Int32 {
        guard verb == .migrate || FileManager.default.fileExists(atPath: path) else {
            throw UsageError(message: "no database at \(path)")
        }
        if let schemaFile, !FileManager.default.isReadableFile(atPath: schemaFile) {
            throw UsageError(message: "no readable schema file at \(schemaFile)")
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
