import SerialDB

/// How the sync's own work shares the processor with the threads it waits for.
///
/// A sync overlaps its work with its requests: it writes one page while the next is on its
/// way, and settles one upload while the next travels. On a machine with few cores the
/// threads that carry a request (URLSession's, and in process the server's) are often woken
/// on the core the sync's work runs on, and wait there for its slice to end while another
/// core idles: on a 2-core Linux VM a request waited up to 2.8 ms behind a page being written,
/// so the request took as long as the write instead of running beside it. The sync's work
/// therefore gives the processor away every few tens of microseconds (``yieldProcessor()``):
/// a thread ready on the same core runs first, and when there is none the yield returns at
/// once. The app's own work is left alone: only the sync's blocks and loops yield.
enum ProcessorSharing {
    /// Rows a loop writes or reads between two yields (each row runs its own statement,
    /// about 2 µs of work).
    static let rowsPerSlice = 32
    /// SQLite virtual-machine instructions between two yields inside a statement that loops
    /// over many rows.
    static let instructionsPerSlice: Int32 = 4000
    /// Changes of a page read between two yields.
    static let changesPerSlice = 64

    /// Yields after every ``rowsPerSlice`` rows of a loop (`index` counts them from 0).
    static func afterRow(_ index: Int) {
        if index % rowsPerSlice == rowsPerSlice - 1 { yieldProcessor() }
    }

    /// Yields after every ``changesPerSlice`` changes read (`index` counts them from 0).
    static func afterChange(_ index: Int) {
        if index % changesPerSlice == changesPerSlice - 1 { yieldProcessor() }
    }

    /// Runs `body`, a block of the sync on `db`, yielding inside the statements that loop.
    static func sharing<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        try db.withProgressCallback(everyInstructions: instructionsPerSlice, yieldProcessor, body)
    }
}
