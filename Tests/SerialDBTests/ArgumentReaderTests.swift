import Testing
import ToolArguments

/// The one command-line convention of every executable, on the reader itself.
@Suite struct ArgumentReaderTests {
    /// Everything `reader` returns, each option with the value it takes (nil for a flag).
    private func read(_ arguments: [String], valued: Set<String> = ["--a", "--b"]) throws -> [String] {
        var reader = ArgumentReader(arguments)
        var seen: [String] = []
        while let argument = try reader.next() {
            switch argument {
            case .option(let name) where valued.contains(name): seen.append("\(name)[\(try reader.value())]")
            case .option(let name): seen.append(name)
            case .operand(let word): seen.append("operand \(word)")
            }
        }
        return seen
    }

    private func usageError(_ arguments: [String], valued: Set<String> = ["--a", "--b"]) -> String? {
        let error = #expect(throws: UsageError.self) { try read(arguments, valued: valued) }
        return error?.message
    }

    @Test func bothSpellingsOfAValueAndOperandsInAnyOrder() throws {
        #expect(
            try read(["x", "--a", "1", "--b=2", "y", "--flag", "--a=", "--b=k=v", "-", "--a", "-1"]) == [
                "operand x", "--a[1]", "--b[2]", "operand y", "--flag", "--a[]", "--b[k=v]", "operand -", "--a[-1]",
            ])
        #expect(try read(["--a", "Grüße ☕", "--b", ""]) == ["--a[Grüße ☕]", "--b[]"])
    }

    @Test func aValueInTheNextArgumentMayNotLookLikeAnOption() throws {
        #expect(usageError(["--a"]) == "--a needs a value")
        #expect(usageError(["--a", "--b", "1"]) == "--a needs a value")
        #expect(usageError(["--a", "--"]) == "--a needs a value")
        #expect(usageError(["--a", "-h"]) == "--a needs a value")
        // With `=`, anything goes.
        #expect(try read(["--a=--b", "--b=-h"]) == ["--a[--b]", "--b[-h]"])
    }

    @Test func aFlagRefusesAValue() {
        #expect(usageError(["--flag=yes"]) == "--flag takes no value, not `yes`")
        #expect(usageError(["--a", "1", "--flag="]) == "--flag takes no value, not ``")
    }

    @Test func helpIsAFlagAnywhereBeforeTheEndOfOptions() throws {
        #expect(ArgumentReader(["-h"]).asksForHelp)
        #expect(ArgumentReader(["x", "--no-such", "--help", "--a"]).asksForHelp)
        #expect(!ArgumentReader(["x", "--", "-h"]).asksForHelp)
        #expect(!ArgumentReader(["--a=-h", "--helpful"]).asksForHelp)
        #expect(!ArgumentReader([]).asksForHelp)
        // next() skips the help flags, so a tool never has to list them.
        #expect(try read(["-h", "x", "--help"]) == ["operand x"])
    }

    @Test func doubleDashEndsTheOptions() throws {
        #expect(
            try read(["--a", "1", "--", "--a", "-h", "--"]) == ["--a[1]", "operand --a", "operand -h", "operand --"])
    }

    @Test func convertedValuesNameWhatWasExpected() throws {
        var reader = ArgumentReader(["--port", "99999", "--n", "2", "--m=-3", "--k", "x"])
        _ = try reader.next()
        #expect(throws: UsageError.self) { try reader.value("a port number 0-65535") { UInt16($0) } }
        _ = try reader.next()
        #expect(try reader.wholeNumber(atLeast: 1) == 2)
        _ = try reader.next()
        let negative = #expect(throws: UsageError.self) { try reader.wholeNumber(atLeast: 0) as Int }
        #expect(negative?.message == "--m needs a whole number of at least 0, not `-3`")
        _ = try reader.next()
        let word = #expect(throws: UsageError.self) { try reader.wholeNumber(atLeast: 0) as Int }
        #expect(word?.message == "--k needs a whole number of at least 0, not `x`")
        #expect(try reader.next() == nil)
    }

    @Test func unexpectedArgumentsAreNamed() {
        let reader = ArgumentReader([])
        #expect(reader.unexpected(.option("--x")).message == "unknown option `--x`")
        #expect(reader.unexpected(.operand("x")).message == "unexpected argument `x`")
    }

    @Test func optionValuesReadPairsAndRefuseTheRest() throws {
        #expect(
            try ArgumentReader.optionValues(["--db", "a b", "--url=http://h", "--db", "c"]) == [
                "--db": "c", "--url": "http://h",
            ])
        #expect(throws: UsageError.self) { try ArgumentReader.optionValues(["--db"]) }
        #expect(throws: UsageError.self) { try ArgumentReader.optionValues(["db", "x"]) }
    }

    @Test func theUsageErrorTextNamesTheProblemAndPointsToHelp() {
        #expect(
            ToolArguments.usageErrorText(tool: "bench", UsageError("unknown option `--x`"))
                == "bench: unknown option `--x`\nRun `bench --help` for the usage.\n")
    }
}
