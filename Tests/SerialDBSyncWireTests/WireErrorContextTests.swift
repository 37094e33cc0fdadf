import SerialDBSyncWire
import Testing

/// The elements of a page are read without describing where each one is, until one is wrong:
/// its error still names it exactly.
@Suite("Where a wrong element of an answer is")
struct WireErrorContextTests {
    private func message(_ read: () throws -> Void) -> String {
        do {
            try read()
            return "no error"
        } catch let error as WireFormatError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test("a wrong value of the second change of a page names its column, its change and the answer")
    func wrongChange() {
        let page = #"""
            {"table": "t", "changes": [
                {"version": 1, "deleted": false, "row": {"id": 1}},
                {"version": 2, "deleted": false, "row": {"id": 2, "n": [1]}}],
             "version": 2, "has_more": false, "resync": false, "floor": 0}
            """#
        #expect(
            message { _ = try FetchDataResponse(jsonBytes: Array(page.utf8)) }
                == #"column "n" of "row" of change 2 of the fetch-data answer is an array, not a column value"#)
        let notAnObject =
            #"{"table": "t", "changes": [{"version": 1, "deleted": false, "row": {}}, 7], "version": 2, "has_more": false, "resync": false}"#
        #expect(
            message { _ = try FetchDataResponse(jsonBytes: Array(notAnObject.utf8)) }
                == "change 2 of the fetch-data answer must be a JSON object, not a number")
    }

    @Test("a wrong status of the third result of an upload names the result and the answer")
    func wrongResult() {
        let answer = #"""
            {"results": [{"seq": 1, "status": "applied", "version": 3}, {"seq": 2, "status": "duplicate"},
                         {"seq": 3, "status": "maybe"}]}
            """#
        #expect(
            message { _ = try PostDataResponse(jsonBytes: Array(answer.utf8)) }
                == #""status" of result 3 of the post-data answer is "maybe", not applied, conflict, rejected or duplicate"#
        )
    }
}
