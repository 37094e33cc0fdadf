import Foundation
import SerialDBSyncWire

/// What a sync server serves: its tables, and how accounts sign in (static tokens, JWTs or
/// both), read from the JSON configuration file.
///
/// ```json
/// {"tables": [
///    {"name": "note", "scope": "account", "struct_version": 1,
///     "schema": "CREATE TABLE note(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT)"}],
///  "tokens": [{"token": "t-alice", "account": "alice"}],
///  "auth": {"jwt": {"hs256_secret_file": "secret.key", "issuer": "https://id.example.com/",
///                   "audience": "notes-sync"}}}
/// ```
///
/// `"auth"` is optional (see ``JWTSignIn``); `"tokens"` may be left out when it is there. Paths
/// in the file are relative to the file's own directory.
///
/// A table whose new definition renames it or its columns says so with
/// `"renamed_from": "old_name"` and `"renamed_columns": {"new": "old"}`: the server carries its
/// stored rows over, and clients apply the same renames.
public struct SyncServerConfiguration: Sendable {
    /// The synced tables, in the order of the file.
    public let tables: [SyncTable]
    /// The accounts' tokens.
    private let tokens: [(token: [UInt8], account: String)]
    /// Sign-in with JWTs, when configured.
    public let jwt: JWTSignIn?

    /// The longest token a configuration may hold, in UTF-8 bytes. The HTTP server reads a
    /// request's line and headers into 32 KiB and answers 431 to more, so a much longer token
    /// could never be sent; this leaves room for the path and a client's other headers.
    public static let maximumTokenLength = 16 * 1024

    /// Builds a configuration from tables, a token → account map and, optionally, JWT sign-in.
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` for two tables of one name, a
    ///   table renamed from a name still configured (or from one another table was renamed
    ///   from), an empty token or account, or a token no HTTP client could send: longer than
    ///   ``maximumTokenLength``, or holding a control character or a space at either end.
    public init(tables: [SyncTable], tokens: [String: String], jwt: JWTSignIn? = nil) throws {
        var seen = Set<String>()
        for table in tables where !seen.insert(table.name.asciiLowercased).inserted {
            throw SyncServerError(.invalidConfiguration, "table \(JSONWriter.quoted(table.name)) is listed twice")
        }
        var renamed = Set<String>()
        for table in tables {
            guard let old = table.renamedFrom else { continue }
            guard !seen.contains(old.asciiLowercased), renamed.insert(old.asciiLowercased).inserted else {
                throw SyncServerError(
                    .invalidConfiguration,
                    "table \(JSONWriter.quoted(table.name)) is \"renamed_from\" \(JSONWriter.quoted(old)), which is "
                        + "still configured or the earlier name of another table; a rename takes an old name only once")
            }
        }
        for (token, account) in tokens.sorted(by: { $0.value < $1.value }) {
            guard !token.isEmpty, !account.isEmpty else {
                throw SyncServerError(.invalidConfiguration, "a token and its account must both be non-empty strings")
            }
            // The message names the account, never the token.
            let owner = "the token of account \(JSONWriter.quoted(account))"
            if token.utf8.count > Self.maximumTokenLength {
                throw SyncServerError(
                    .invalidConfiguration,
                    "\(owner) is \(token.utf8.count) bytes long; an HTTP header carries at most "
                        + "\(Self.maximumTokenLength): configure a shorter token")
            }
            if token.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
                || token.first?.isWhitespace == true || token.last?.isWhitespace == true
            {
                throw SyncServerError(
                    .invalidConfiguration,
                    "\(owner) holds a control character or begins or ends with a space, which no HTTP header "
                        + "can carry: configure a token of printable characters")
            }
        }
        self.tables = tables
        self.tokens = tokens.sorted { $0.key < $1.key }.map { (Array($0.key.utf8), $0.value) }
        self.jwt = jwt
    }

    /// Reads the configuration file, and the key files it names (relative to its directory).
    ///
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` naming the file and what is wrong in it.
    public init(contentsOfFile path: String) throws {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw SyncServerError(.invalidConfiguration, "cannot read the configuration file \(path): \(error)")
        }
        do {
            try self.init(json: data, relativeTo: URL(fileURLWithPath: path).deletingLastPathComponent())
        } catch let error as SyncServerError {
            throw SyncServerError(.invalidConfiguration, "\(path): \(error.message)")
        }
    }

    /// Parses the configuration from JSON text (the file format above).
    ///
    /// - Parameters:
    ///   - data: the JSON text.
    ///   - directory: where the relative paths of key files start; the working directory when `nil`.
    /// - Throws: ``SyncServerError/Code/invalidConfiguration`` saying what is wrong.
    public init(json data: Data, relativeTo directory: URL? = nil) throws {
        func invalid(_ message: String) -> SyncServerError { SyncServerError(.invalidConfiguration, message) }
        let root: [String: JSONValue]
        do {
            guard let object = try JSONValue.parse(data).objectValue else {
                throw invalid("the file is not a JSON object")
            }
            root = object
        } catch let error as JSONParseError {
            throw invalid(error.message)
        }
        guard let tableEntries = root["tables"]?.arrayValue else { throw invalid("\"tables\" must be an array") }
        var tables: [SyncTable] = []
        for (position, entry) in tableEntries.enumerated() {
            guard let fields = entry.objectValue, let name = fields["name"]?.stringValue, !name.isEmpty else {
                throw invalid("table \(position + 1) needs a \"name\"")
            }
            let label = "table \(JSONWriter.quoted(name))"
            guard let scopeName = fields["scope"]?.stringValue, let scope = SyncScope(rawValue: scopeName) else {
                throw invalid("\(label) needs a \"scope\" of \"account\" or \"global\"")
            }
            guard let structVersion = fields["struct_version"]?.integerValue, structVersion >= 1 else {
                throw invalid("\(label) needs a \"struct_version\" of 1 or more")
            }
            guard let schema = fields["schema"]?.stringValue, !schema.isEmpty else {
                throw invalid("\(label) needs a \"schema\" (its CREATE TABLE)")
            }
            var renamedFrom: String?
            if let value = fields["renamed_from"] {
                guard let old = value.stringValue, !old.isEmpty else {
                    throw invalid("\(label): \"renamed_from\" must be the table's earlier name")
                }
                renamedFrom = old
            }
            var renamedColumns: [String: String] = [:]
            if let value = fields["renamed_columns"] {
                guard let members = value.objectValue else {
                    throw invalid("\(label): \"renamed_columns\" must be an object of new name: old name")
                }
                for (new, old) in members {
                    guard let old = old.stringValue, !old.isEmpty, !new.isEmpty else {
                        throw invalid("\(label): \"renamed_columns\" must map each new column name to its old name")
                    }
                    renamedColumns[new] = old
                }
            }
            tables.append(
                try SyncTable(
                    name: name, scope: scope, structVersion: structVersion, schema: schema, renamedFrom: renamedFrom,
                    renamedColumns: renamedColumns))
        }
        var jwt: JWTSignIn?
        if let auth = root["auth"] {
            guard let members = auth.objectValue, members.keys.allSatisfy({ $0 == "jwt" }) else {
                throw invalid("\"auth\" must be an object whose only member is \"jwt\"")
            }
            if let section = members["jwt"] {
                let base = directory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
                jwt = try JWTSignIn(json: section, relativeTo: base)
            }
        }
        // With JWT sign-in, static tokens are optional.
        let tokenList = root["tokens"] ?? (jwt == nil ? nil : .array([]))
        guard let tokenEntries = tokenList?.arrayValue else { throw invalid("\"tokens\" must be an array") }
        var tokens: [String: String] = [:]
        for (position, entry) in tokenEntries.enumerated() {
            guard let fields = entry.objectValue, let token = fields["token"]?.stringValue,
                let account = fields["account"]?.stringValue
            else { throw invalid("token \(position + 1) needs a \"token\" and an \"account\"") }
            guard tokens.updateValue(account, forKey: token) == nil else {
                throw invalid("token \(position + 1) is listed twice")
            }
        }
        try self.init(tables: tables, tokens: tokens, jwt: jwt)
    }

    /// The table with this name, exactly as configured.
    public func table(named name: String) -> SyncTable? {
        tables.first { $0.name == name }
    }

    /// The account a bearer token signs in, or `nil`: a configured token, or else a JWT that
    /// ``jwt`` accepts now.
    public func account(forToken token: String) -> String? {
        try? signIn(token: token, now: Date())
    }

    /// The account `token` signs in at `now`.
    ///
    /// - Throws: a 401 saying which check a JWT failed, or that the token is unknown.
    func signIn(token: String, now: Date) throws(SyncRequestError) -> String {
        if let account = staticAccount(forToken: token) { return account }
        guard let jwt, JWTSignIn.looksLikeJWT(token) else { throw .unauthorized }
        do {
            return try jwt.account(forToken: token, now: now)
        } catch {
            throw .unauthorized(error.message)
        }
    }

    /// The account of a configured token. Every configured token is compared in full whatever
    /// matches, so the time taken says nothing about how much of a token was right.
    private func staticAccount(forToken token: String) -> String? {
        let given = Array(token.utf8)
        var found: String?
        for entry in tokens where Self.constantTimeEqual(given, entry.token) {
            found = entry.account
        }
        return found
    }

    /// Compares every byte of the longer of the two, so the time does not depend on where
    /// they first differ.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        let length = max(a.count, b.count)
        for index in 0..<length {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}

extension SyncServerConfiguration {
    /// Whether both configurations define the same tables the same way (tokens and keys aside).
    func hasSameDefinitions(as other: SyncServerConfiguration) -> Bool {
        tables.count == other.tables.count
            && zip(tables, other.tables).allSatisfy { a, b in
                a === b
                    || (a.name == b.name && a.scope == b.scope && a.structVersion == b.structVersion
                        && a.schema == b.schema && a.renamedFrom == b.renamedFrom
                        && a.renamedColumns == b.renamedColumns)
            }
    }

    /// `constantTimeEqual(_:_:)` on strings, for the tests.
    static func constantTimeEqualForTesting(_ a: String, _ b: String) -> Bool {
        constantTimeEqual(Array(a.utf8), Array(b.utf8))
    }
}
