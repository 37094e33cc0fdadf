/// The two implementations a workload compares.
enum Side: String {
    case serialDB = "serialdb"
    case rawC = "c"
}
