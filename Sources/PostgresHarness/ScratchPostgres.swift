import CLibPQ
import Foundation
import HarnessSupport
import SerialDB

/// A PostgreSQL server for the tests and the benchmark, found or started once per process:
///
/// 1. the server at `SERIALDB_TEST_POSTGRES_URL` when that is set (`.ci/run` starts one);
/// 2. else, when the PostgreSQL 15 binaries are installed, a throwaway cluster of this process's
///    own (`initdb` into a temporary folder, `pg_ctl start` on a free loopback port; as root, as
///    the `postgres` user, since `initdb` refuses root), stopped when the process exits;
/// 3. else none, with the reason.
///
/// Every user takes a fresh database of its own (``makeDatabase()``), so work running in
/// parallel never shares data; the databases made on an outside server are dropped at exit.
public enum ScratchPostgres {
    /// The environment variable that names a server to use instead of starting one.
    public static let urlVariable = "SERIALDB_TEST_POSTGRES_URL"
    /// Where Debian's `postgresql-15` installs `initdb`, `pg_ctl` and `postgres`.
    public static let binaries = "/usr/lib/postgresql/15/bin"

    /// The server's URL (its maintenance database), or why there is none.
    public static var server: Result<String, ScratchPostgresError> { started }

    /// Whether the environment says this runs in CI, where a missing PostgreSQL is a failure.
    public static var isCI: Bool { ProcessInfo.processInfo.environment["CI"].map { !$0.isEmpty } ?? false }

    /// Creates a database with a new name on the server and returns its URL.
    ///
    /// - Throws: ``ScratchPostgresError`` when there is no server or it refuses.
    public static func makeDatabase(prefix: String = "serialdb_test") throws -> String {
        let serverURL = try server.get()
        let name = "\(prefix)_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        try execute("CREATE DATABASE \(name.quotedDatabaseIdentifier)", at: serverURL)
        created.withLock { $0.append(name) }
        return try url(serverURL, database: name)
    }

    /// Runs constant SQL at `url` on a connection of its own.
    ///
    /// - Throws: ``ScratchPostgresError`` with libpq's message.
    public static func execute(_ sql: String, at url: String) throws {
        try ScratchPostgresSession(url: url).query(sql)
    }

    /// `url` with its database replaced by `database`.
    public static func url(_ url: String, database: String) throws -> String {
        guard var components = URLComponents(string: url), components.scheme?.hasPrefix("postgres") == true else {
            throw ScratchPostgresError("\(urlVariable) must be a postgresql:// URL, not \(url)")
        }
        components.path = "/" + database
        return components.string!
    }

    // MARK: - Finding or starting the server

    private static let created = Locked<[String]>([])
    private static let cluster = Locked<URL?>(nil)

    /// Found or started on first use, once per process (a static `let` is initialised once).
    private static let started: Result<String, ScratchPostgresError> = {
        let result: Result<String, ScratchPostgresError>
        if let url = ProcessInfo.processInfo.environment[urlVariable], !url.isEmpty {
            result = .success(url)
        } else if FileManager.default.isExecutableFile(atPath: "\(binaries)/initdb") {
            result = Result { try startCluster() }.mapError {
                $0 as? ScratchPostgresError ?? ScratchPostgresError("\($0)")
            }
        } else {
            result = .failure(
                ScratchPostgresError(
                    "no PostgreSQL binaries found at \(binaries); install postgresql-15 to run them "
                        + "(or set \(urlVariable) to a server's URL)"))
        }
        atexit { ScratchPostgres.cleanUp() }
        return result
    }()

    /// `initdb`, `pg_ctl start` on a free loopback port; returns the maintenance database's URL.
    private static func startCluster() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "serialdb-postgres-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        cluster.withLock { $0 = folder }
        let asRoot = getuid() == 0
        if asRoot {
            // initdb refuses to run as root: the cluster belongs to the postgres user.
            guard let user = getpwnam("postgres") else {
                throw ScratchPostgresError("running as root and there is no postgres user to own the cluster")
            }
            guard chown(folder.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
                throw ScratchPostgresError("cannot give \(folder.path) to the postgres user: errno \(errno)")
            }
        }
        let data = folder.appendingPathComponent("data").path
        let user = asRoot ? "postgres" : NSUserName()
        try run(
            "initdb", ["-D", data, "-U", user, "--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync"],
            asRoot: asRoot)
        let port = try freePort()
        try run(
            "pg_ctl",
            [
                "-D", data, "-l", folder.appendingPathComponent("server.log").path, "-w", "-t", "60", "-o",
                "-p \(port) -k \(folder.path) -c listen_addresses=127.0.0.1 -c max_connections=400", "start",
            ], asRoot: asRoot)
        return "postgresql://\(user)@127.0.0.1:\(port)/postgres"
    }

    /// Drops the databases made on an outside server; stops and removes the cluster this process started.
    private static func cleanUp() {
        if let folder = cluster.withLock({ $0 }) {
            _ = try? run(
                "pg_ctl", ["-D", folder.appendingPathComponent("data").path, "-m", "immediate", "stop"],
                asRoot: getuid() == 0)
            try? FileManager.default.removeItem(at: folder)
        } else if case .success(let url) = started {
            for name in created.withLock({ $0 }) {
                try? execute("DROP DATABASE IF EXISTS \(name.quotedDatabaseIdentifier) WITH (FORCE)", at: url)
            }
        }
    }

    /// Runs one of the PostgreSQL binaries and waits for it.
    ///
    /// `posix_spawn` and `waitpid`, not `Process`: this runs inside a one-time initialiser on a
    /// test's thread, where `Process` did not notice that `runuser` had exited. Its output goes
    /// to a file, not a pipe: the server `pg_ctl` starts would inherit a pipe and keep it open.
    private static func run(_ tool: String, _ arguments: [String], asRoot: Bool) throws {
        let command: [String]
        if asRoot {
            let runuser =
                FileManager.default.isExecutableFile(atPath: "/usr/sbin/runuser")
                ? "/usr/sbin/runuser" : "/sbin/runuser"
            command = [runuser, "-u", "postgres", "--", "\(binaries)/\(tool)"] + arguments
        } else {
            command = ["\(binaries)/\(tool)"] + arguments
        }
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "serialdb-postgres-\(tool)-\(UUID().uuidString).out"
        ).path
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // The server `pg_ctl` starts would keep every descriptor it inherits (the test process's
        // sockets, pipes and lock files) for its whole life.
        #if !canImport(Darwin)
            if let failure = SpawnActions.closeDescriptorsAboveStandardError(&actions) {
                throw ScratchPostgresError("cannot start \(command[0]): \(failure)")
            }
        #endif
        let arguments = command.map { strdup($0) } + [nil]
        defer { for argument in arguments { free(argument) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, command[0], &actions, nil, arguments, environ)
        guard spawned == 0 else { throw ScratchPostgresError("cannot start \(command[0]): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let printed = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        // Exited normally with status 0: the low 7 bits (the signal) and the exit code are 0.
        guard status == 0 else {
            throw ScratchPostgresError("\(tool) failed (wait status \(status)): \(printed)")
        }
    }

    /// A loopback port nobody listens on now.
    private static func freePort() throws -> Int {
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw ScratchPostgresError("cannot open a socket: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw ScratchPostgresError("cannot find a free port: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why there is no PostgreSQL for the tests, or what it refused.
public struct ScratchPostgresError: Error, Sendable, CustomStringConvertible {
    /// What happened and what to do.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// One session of its own on a database, for tests that hold a lock, terminate other sessions,
/// or read what a store wrote. Used from one thread at a time.
public final class ScratchPostgresSession: @unchecked Sendable {
    // Safe to share between tasks that take turns: libpq connections are not used concurrently
    // by the tests, which await each call.
    private let connection: OpaquePointer

    /// Connects to `url`.
    ///
    /// - Throws: ``ScratchPostgresError`` with libpq's message.
    public init(url: String) throws {
        guard let connection = PQconnectdb(url) else { throw ScratchPostgresError("libpq is out of memory") }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw ScratchPostgresError("cannot connect to \(url): \(message)")
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    /// Runs constant SQL and returns its rows, each value as text (`nil`: NULL).
    ///
    /// - Throws: ``ScratchPostgresError`` with PostgreSQL's message.
    @discardableResult
    public func query(_ sql: String) throws -> [[String?]] {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw ScratchPostgresError("`\(sql)` failed: \(String(cString: PQerrorMessage(connection)))")
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) != 0 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }
}
