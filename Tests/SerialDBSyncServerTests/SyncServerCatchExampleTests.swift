import Foundation
import SerialDBSyncServer
import Testing

/// The `catch` clauses of `SyncServerError`'s documentation, compiled and run as written.
@Suite struct SyncServerCatchExampleTests {
    /// Which clause caught the error.
    enum Caught: Equatable {
        case cannotStart, invalidConfiguration, other
    }

    private func caught(_ body: () throws -> Void) -> Caught {
        do {
            try body()
            return .other
        } catch SyncServerError.Code.cannotStart {
            return .cannotStart
        } catch let error as SyncServerError where error.code == .invalidConfiguration {
            return .invalidConfiguration
        } catch {
            return .other
        }
    }

    @Test func aConfigurationThatCannotBeServedIsCaughtByTheWhereClause() {
        let outcome = caught {
            _ = try SyncServerConfiguration(json: Data(#"{"tables": [], "tokens": [{"token": "t"}]}"#.utf8))
        }
        #expect(outcome == .invalidConfiguration)
    }

    @Test func aCodeMatchesOnlyASyncServerErrorWithThatCode() {
        let error = SyncServerError(.cannotStart, "port taken")
        #expect(caught { throw error } == .cannotStart)
        #expect(SyncServerError.Code.cannotStart ~= error)
        #expect(!(SyncServerError.Code.invalidStore ~= error))
        #expect(!(SyncServerError.Code.cannotStart ~= CocoaError(.fileNoSuchFile)))
        #expect(SyncServerError.Code.invalidStore.rawValue == "invalidStore")
    }
}
