/// A REAL value JSON cannot carry: an infinity or NaN. The protocol has no form for it, so a
/// writer that must not lose the value refuses it instead of writing `null`.
public struct NonFiniteValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The value refused.
    public let value: Double

    /// An error for `value`.
    public init(value: Double) {
        self.value = value
    }

    /// What happened and what to do.
    public var description: String {
        "A REAL value is \(value), which JSON cannot carry; store a finite number or NULL."
    }

    /// Whether both refused the same value (NaN equals NaN here).
    public static func == (lhs: NonFiniteValueError, rhs: NonFiniteValueError) -> Bool {
        lhs.value.bitPattern == rhs.value.bitPattern
    }
}
