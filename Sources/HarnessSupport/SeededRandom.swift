/// SplitMix64: a small generator whose whole state is one integer, so that every random choice of
/// a run (a stress run's operations, kill points and faults; a property test's schemas) follows
/// from a printed seed and can be replayed.
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator that starts from `seed` itself.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for one independent stream of a run (one writer, the kill points...): adding
    /// draws to one stream never shifts the draws of another.
    public init(seed: UInt64, stream: UInt64) {
        state = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        _ = next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }
}
