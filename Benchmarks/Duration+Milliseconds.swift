extension Duration {
    /// The duration in milliseconds, the unit of every figure the benchmark reports.
    var milliseconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) * 1e3 + Double(attoseconds) / 1e15
    }
}
