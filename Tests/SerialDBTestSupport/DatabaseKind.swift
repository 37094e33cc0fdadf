import SerialDB

/// Tests run against both a file database and an in-memory one: the two differ in journal
/// mode, locking and durability.
public enum DatabaseKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case file
    case memory

    /// "file" or "memory", for test names.
    public var description: String { rawValue }

    /// Opens a queue of this kind; the directory keeps a file database alive.
    public func makeQueue(
        in directory: TemporaryDirectory, name: String = "test.sqlite", configuration: Configuration = Configuration()
    ) throws -> DatabaseQueue {
        switch self {
        case .file: return try DatabaseQueue(path: directory.path(name), configuration: configuration)
        case .memory: return try DatabaseQueue(configuration: configuration)
        }
    }
}
