/// A failure of the harness itself or of a check it makes while running (not an invariant
/// verdict, which is an ``Invariant``).
struct StressError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
