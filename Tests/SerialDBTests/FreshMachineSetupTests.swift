import Foundation
import SerialDBTestSupport
import Testing

/// The README's two commands set up a fresh machine by themselves: both go through
/// `./with-packages`, which installs the Debian packages that are missing (from the one list in
/// `.ci/install-packages`) and then runs the command; CI runs the same test command.
@Suite struct FreshMachineSetupTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    private static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The commands of the README's first code block, without their comments.
    private static func readmeCommands() throws -> [String] {
        let readme = try text("README.md")
        let block = try #require(readme.components(separatedBy: "```sh\n").dropFirst().first)
        let body = try #require(block.components(separatedBy: "```").first)
        return body.split(separator: "\n").map {
            String($0.split(separator: "#", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces)
        }
    }

    @Test func theREADMEStartsWithTwoCommandsThatInstallWhatIsMissing() throws {
        let commands = try Self.readmeCommands()
        #expect(commands == ["./with-packages swift run -c release stress", "./with-packages swift test"])
        let ci = try Self.text(".ci/run")
        #expect(ci.contains("timeout 1200 ./with-packages swift test 2>&1"), "CI must run the README's test command")
    }

    /// The packages `.ci/install-packages` installs, from its `packages=(...)` line.
    private static func listedPackages() throws -> [String] {
        let installer = try text(".ci/install-packages")
        let listLine = try #require(installer.split(separator: "\n").first { $0.hasPrefix("packages=(") })
        return listLine.dropFirst("packages=(".count).dropLast().split(separator: " ").map(String.init)
    }

    /// A system library that `.ci/install-packages` does not install fails the build on a fresh
    /// machine (`'microhttpd.h' file not found`): every apt provider of Package.swift is listed.
    @Test func everySystemLibraryOfThePackageIsInstalled() throws {
        let manifest = try Self.text("Package.swift")
        let providers = manifest.components(separatedBy: ".apt([").dropFirst().flatMap { part in
            (part.components(separatedBy: "]").first ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \"\n"))
            }
        }
        #expect(providers.count >= 3)
        let listed = try Self.listedPackages()
        for provider in providers {
            #expect(listed.contains(provider), "\(provider) is a system library of Package.swift")
        }
    }

    /// Runs `./with-packages` with stand-ins for `dpkg-query` and `apt-get` on the PATH, as
    /// root: the stand-in `dpkg-query` says only `installed` are installed, and `apt-get`
    /// writes its arguments to a log instead of installing anything.
    private func runWithPackages(installed: [String], command: [String]) async throws -> (ToolRun, String) {
        let directory = try TemporaryDirectory()
        let bin = directory.path("bin")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let log = directory.path("apt.log")
        let stubs = [
            "dpkg-query": """
            #!/bin/sh
            for package in \(installed.joined(separator: " ")); do
                [ "$package" = "$3" ] && { printf 'install ok installed'; exit 0; }
            done
            exit 1
            """,
            "apt-get": "#!/bin/sh\necho \"$@\" >> '\(log)'\n",
            "id": "#!/bin/sh\necho 0\n",
        ]
        for (name, script) in stubs {
            let path = "\(bin)/\(name)"
            try script.write(toFile: path, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = "\(bin):/usr/bin:/bin"
        let run = try await ToolRun(
            executable: Self.root.appendingPathComponent("with-packages"), command, environment: environment,
            seconds: 60)
        let apt = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        return (run, apt)
    }

    @Test func aMissingPackageIsInstalledBeforeTheCommandRuns() async throws {
        let listed = try Self.listedPackages()
        #expect(listed.contains("libmicrohttpd-dev"))
        let (run, apt) = try await runWithPackages(
            installed: listed.filter { $0 != "libmicrohttpd-dev" },
            command: ["sh", "-c", "echo the command ran; exit 7"])
        #expect(run.status == 7, "the command's own exit status: \(run.errors)")
        #expect(run.output == "the command ran\n")
        #expect(apt.contains("update"))
        #expect(apt.contains("install -y -qq --no-install-recommends libmicrohttpd-dev\n"), "\(apt)")
    }

    @Test func nothingIsInstalledWhenEverythingIsThere() async throws {
        let (run, apt) = try await runWithPackages(
            installed: try Self.listedPackages(), command: ["sh", "-c", "echo ok"])
        #expect(run.status == 0)
        #expect(run.output == "ok\n")
        #expect(run.errors.contains("already installed"))
        #expect(apt.isEmpty)
    }

    @Test func withoutACommandItSaysHowToUseIt() async throws {
        let (run, _) = try await runWithPackages(installed: [], command: [])
        #expect(run.status == 2)
        #expect(run.errors.contains("usage: ./with-packages COMMAND"))
    }
}
