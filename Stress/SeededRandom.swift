/// SplitMix64: a small generator whose whole state is one integer, so that every random choice
/// of a run (the writers' operations, the kill points, the faults) follows from the printed seed.
struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator for one independent stream of the run (one writer, the kill points...): adding
    /// draws to one stream never shifts the draws of another.
    init(seed: UInt64, stream: UInt64) {
        state = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        _ = next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
