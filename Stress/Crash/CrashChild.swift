import Foundation
import SerialDB
import ToolArguments

/// The process the crash scenario kills (hidden subcommand `crash-child`): it opens the file,
/// starts writers, starts the upgrade after a warm-up, then keeps writing until it is killed.
///
/// Standard output is its report to the parent: `A ...` for each acknowledged write and `E ...`
/// for each failed one (see ``Acknowledgement/line`` and ``WriteFailure/line``), `phase ...` as
/// it moves on (`open`, `load`, `migrating`, `migrated MS`), and `step started|committed ID`
/// from the upgrade's progress callback.
enum CrashChild {
    static let subcommand = "crash-child"
    /// A child nobody kills stops by itself after this long, so that no process is left behind.
    private static let lifetimeLimit = 120.0

    /// The command line the parent passes.
    static func arguments(
        path: String, generation: Int, settings: ScenarioSettings, warmup: Double
    ) -> [String] {
        var arguments = [
            subcommand, "--path", path, "--generation", "\(generation)", "--seed", "\(settings.seed)",
            "--writers", "\(settings.writers)", "--tasks", "\(settings.tasks)", "--rows", "\(settings.rows)",
            "--warmup", "\(warmup)",
        ]
        if let broken = settings.brokenWriter { arguments += ["--broken-writer", broken.rawValue] }
        if settings.online { arguments += ["--online", "1"] }
        return arguments
    }

    /// Runs the child and returns its exit status.
    static func run(_ arguments: [String]) -> Int32 {
        guard let values = try? ArgumentReader.optionValues(arguments), let path = values["--path"],
            let generation = values["--generation"].flatMap(Int.init),
            let seed = values["--seed"].flatMap(UInt64.init), let writers = values["--writers"].flatMap(Int.init),
            let tasks = values["--tasks"].flatMap(Int.init), let rows = values["--rows"].flatMap(Int.init),
            let warmup = values["--warmup"].flatMap(Double.init)
        else {
            Console.error("stress crash-child: bad arguments \(arguments)")
            return ToolArguments.usageStatus
        }
        let broken = values["--broken-writer"].flatMap(BrokenWriterMode.init(rawValue:))
        let output = ChildOutput()
        do {
            output.line("phase open")
            let queue = try DatabaseQueue(path: path)
            let control = LoadControl()
            let pool = WriterPool(
                generation: generation, threads: writers, tasks: tasks, seedRows: rows, seed: seed, sink: output,
                budget: Writer.Budget(), broken: broken)
            try queue.write { db in try ItemTable.registerAuthors(db, pool.authors) }
            let clock = RunClock()
            pool.start(target: .queue(queue), control: control, clock: clock)
            output.line("phase load")
            Thread.sleep(forTimeInterval: warmup)
            let migrator = UpgradePlan(online: values["--online"] == "1").migrator()
            if values["--online"] == "1" {
                // The copy runs while the writers write; a kill here must leave the old table whole.
                output.line("phase copying")
                let copyStart = clock.now
                do {
                    _ = try LoadTarget.queue(queue).prepareMigrationBlocking(migrator)
                } catch {
                    output.line("phase migration-failed \(error)".replacingOccurrences(of: "\n", with: " "))
                    control.stop()
                    pool.join()
                    return 1
                }
                output.line("phase copied \(Statistics.milliseconds(clock.now - copyStart))")
            }
            output.line("phase migrating")
            let start = clock.now
            let handle = queue.startMigration(migrator) { progress in
                switch progress.event {
                case .stepStarted: output.line("step started \(progress.migration)")
                case .stepCommitted: output.line("step committed \(progress.migration)")
                case .stepProgress: break
                }
            }
            control.markUpgradeStarted()
            do {
                try handle.wait()
                output.line("phase migrated \(Statistics.milliseconds(clock.now - start))")
            } catch {
                output.line("phase migration-failed \(error)".replacingOccurrences(of: "\n", with: " "))
                control.stop()
                pool.join()
                return 1
            }
            Thread.sleep(forTimeInterval: lifetimeLimit)
            control.stop()
            pool.join()
            try queue.close()
            output.line("phase done")
            return 0
        } catch {
            output.line("phase error \(error)".replacingOccurrences(of: "\n", with: " "))
            return 1
        }
    }
}

/// The crash child's sink: one line on standard output per outcome, written after the write
/// call returned. Each line goes out in a single write(2) of less than PIPE_BUF bytes, so lines
/// from several threads never interleave, and a line the parent reads was really printed
/// before the kill.
struct ChildOutput: AcknowledgementSink {
    func acknowledged(_ acknowledgement: Acknowledgement) {
        line(acknowledgement.line)
    }

    func failed(_ failure: WriteFailure) {
        line(String(failure.line.prefix(1_000)))
    }

    func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
