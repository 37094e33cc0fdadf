/// One property a scenario promises, checked after it ran: the summary prints it as PASS or FAIL
/// and the JSON report lists it.
struct Invariant: Sendable, Codable {
    let name: String
    let passed: Bool
    let detail: String

    init(_ name: String, _ passed: Bool, _ detail: String = "") {
        self.name = name
        self.passed = passed
        self.detail = detail
    }
}
