import SerialDB

/// Tests of the shared surface run on a queue and on a pool, both on a file.
public enum WriterKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case queue
    case pool

    /// "queue" or "pool", for test names.
    public var description: String { rawValue }

    /// Opens a writer of this kind on a file in `directory`.
    public func make(
        in directory: TemporaryDirectory, name: String = "writer.sqlite", configuration: Configuration = Configuration()
    ) throws -> any DatabaseWriter {
        switch self {
        case .queue: return try DatabaseQueue(path: directory.path(name), configuration: configuration)
        case .pool: return try DatabasePool(path: directory.path(name), configuration: configuration)
        }
    }
}
