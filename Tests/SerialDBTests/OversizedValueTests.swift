import CSQLite
import Foundation
import SerialDB
import SerialDBTestSupport
import Testing

/// Values too large for SQLite, and sizes or numbers that do not fit the C API's integers,
/// surface as errors (or are stored another way), never as a trap at the C boundary.
@Suite struct OversizedValueTests {
    /// 2 GiB: one more byte than a C `int` can count.
    static let twoGibibytes = Int(Int32.max) + 1

    private func expectTooBig(_ value: any DatabaseValueConvertible, in db: Database) {
        let error = #expect(throws: DatabaseError.self) { try db.execute(sql: "SELECT ?", arguments: [value]) }
        #expect(error?.resultCode == .SQLITE_TOOBIG, "\(String(describing: error))")
    }

    @Test(arguments: DatabaseKind.allCases)
    func valuesLongerThanTheLengthLimitAreTooBig(kind: DatabaseKind) throws {
        let directory = try TemporaryDirectory()
        let queue = try kind.makeQueue(in: directory)
        try queue.inDatabase { db throws in
            sqlite3_limit(db.handle, SQLITE_LIMIT_LENGTH, 100)
            expectTooBig(Data(count: 101), in: db)
            expectTooBig(String(repeating: "é", count: 51), in: db)  // 102 bytes of UTF-8
            #expect(try db.fetchOne(Data.self, sql: "SELECT ?", arguments: [Data(count: 100)])?.count == 100)
            #expect(
                try db.fetchOne(String.self, sql: "SELECT ?", arguments: [String(repeating: "é", count: 50)]) != nil)
        }
    }

    /// The buffers are reserved, not written: the kernel maps their pages only when touched,
    /// and SQLite refuses the length before reading a byte. The string's bytes are left
    /// uninitialised: fresh pages read as zeros, but an allocator that fills them (as
    /// AddressSanitizer's does) gives bytes that are not UTF-8, each repaired into three, so
    /// the string is at least, not exactly, 2 GiB long; too big either way.
    @Test func aBlobOrStringOfTwoGibibytesIsTooBigInsteadOfATrap() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            let blob = Data(count: Self.twoGibibytes)
            expectTooBig(blob, in: db)
            let text = String(unsafeUninitializedCapacity: Self.twoGibibytes) { _ in Self.twoGibibytes }
            #expect(text.utf8.count >= Self.twoGibibytes)
            expectTooBig(text, in: db)
            expectTooBig(DatabaseValue.blob(blob), in: db)
        }
    }

    @Test func aDateTooFarForTextIsStoredAsSecondsAndReadsBack() throws {
        let queue = try DatabaseQueue()
        try queue.inDatabase { db throws in
            for seconds in [1e300, -1e300, Double.infinity] {
                let date = Date(timeIntervalSince1970: seconds)
                #expect(date.databaseValue == .real(seconds))
                #expect(try db.fetchOne(Date.self, sql: "SELECT ?", arguments: [date]) == date)
            }
        }
    }

    @Test func aBusyTimeoutBeyondWhatSQLiteCountsOpensAConnection() throws {
        var configuration = Configuration()
        configuration.busyTimeout = .seconds(Int64.max / 10)
        let queue = try DatabaseQueue(configuration: configuration)
        #expect(try queue.inDatabase { db in try db.fetchOne(Int.self, sql: "SELECT 1") } == 1)
    }
}
