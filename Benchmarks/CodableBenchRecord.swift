/// One row of `t` read through the synthesized `Decodable` conformance (columns by name).
///
/// It must not also be `RowDecodable`, or `fetchAll` would pick the faster initializer and the
/// workload would measure the wrong path.
struct CodableBenchRecord: Decodable {
    var id: Int64
    var a: Int64
    var b: String
    var c: Double
}
