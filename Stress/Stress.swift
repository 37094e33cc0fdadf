import Dispatch
import Foundation
import SerialDB

/// The project's main job: hammers one `DatabaseQueue` with concurrent writers on a temporary
/// file database and proves that every acknowledged write is there exactly once.
///
/// This is the first scenario of the stress harness; migrations under load, crashes and I/O
/// faults are added as the library grows (see the README).
@main
struct Stress {
    static func main() {
        do {
            let passed = try ConcurrentWritersScenario(writers: 8, writesPerWriter: 2_000).run()
            exit(passed ? 0 : 1)
        } catch {
            FileHandle.standardError.write(Data("stress: \(error)\n".utf8))
            exit(2)
        }
    }
}
