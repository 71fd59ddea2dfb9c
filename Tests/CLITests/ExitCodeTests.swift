import BeaconModel
import Foundation
import TestSupport
import Testing

@testable import BeaconBridgeCLI

/// Issue 17, item 11: the exit codes of the built binary are the ones the README and `--help` list, for bad
/// captures, bad data, FIFOs and pipes; paced replays cap idle gaps.
@Suite(.serialized) struct ExitCodeTests {
    @Test func helpListsTheExitCodeTableOfTheReadme() async throws {
        let help = try await BuiltBinary.run(["--help"])
        #expect(help.status == 0)
        let readme = try String(contentsOfFile: BuiltBinary.packageRoot + "/README.md", encoding: .utf8)
        for code in ["0", "64", "65", "66", "69", "70", "73", "74", "78"] {
            #expect(help.stdout.contains("\n  \(code) "), "--help lacks exit code \(code)")
            #expect(readme.contains("| \(code) |"), "README's table lacks exit code \(code)")
        }
        #expect(!help.stdout.contains(" 1 input error"))
    }

    @Test func replayOfAMissingCaptureExits66() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let run = try await BuiltBinary.run(
            ["replay", bed.directory + "/missing.btsnoop", "--config", bed.configPath], timeout: 60)
        #expect(run.status == 66, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("missing.btsnoop"))
    }

    @Test func replayOfAFileThatIsNotBTSnoopExits65() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let path = bed.directory + "/notes.txt"
        try "just some text, not a capture\n".write(toFile: path, atomically: true, encoding: .utf8)
        let run = try await BuiltBinary.run(["replay", path, "--config", bed.configPath], timeout: 60)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("notes.txt"))
    }

    @Test func replayOfACaptureDamagedMidFileReplaysWhatWasValidThenExits65() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        let observations = DaemonTestBed.iBeaconObservations(minor: 7, start: 1_700_000_000, duration: 60, interval: 1)
        let capture = try bed.writeCapture("whole.btsnoop", observations)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: capture))
        let cut = bed.directory + "/cut.btsnoop"
        try bytes.prefix(bytes.count / 2 + 5).write(to: URL(fileURLWithPath: cut))
        let subscriber = try await bed.startSubscriber()
        defer { Task { await subscriber.stop() } }

        let run = try await BuiltBinary.run(["replay", cut, "--config", bed.configPath], timeout: 90)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(
            run.stderr.contains("capture damaged: the events before the damage were replayed"), "stderr: \(run.stderr)")
        let replayed = try #require(
            logValue(run.stderr, message: "capture replayed", key: "hci_events").flatMap { Int($0) })
        #expect(replayed > 0 && replayed < observations.count)
        // What preceded the damage went all the way to the broker.
        try await waitUntil("the beacon's presence", timeout: 60) {
            subscriber.messages(under: "\(bed.topicBase)/presence/").contains {
                $0.string("beacon_id") == bed.beaconID(minor: 7)
            }
        }
    }

    @Test func aFIFOAsCaptureOrConfigIsRefusedAtOnce() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        let fifo = bed.directory + "/capture.fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let replay = try await BuiltBinary.run(["replay", fifo, "--config", bed.configPath], timeout: 60)
        #expect(replay.status == 66, "stderr: \(replay.stderr)")
        #expect(replay.stderr.contains("a FIFO or pipe, not a regular file"), "stderr: \(replay.stderr)")

        let decode = try await BuiltBinary.run(["decode", "--btsnoop", fifo], timeout: 60)
        #expect(decode.status == 66, "stdout: \(decode.stdout)")
        #expect(decode.stdout.contains("not a regular file"))

        for command in ["check-config", "run"] {
            let config = try await BuiltBinary.run([command, "--config", fifo], timeout: 60)
            #expect(config.status == 66, "\(command) stderr: \(config.stderr)")
            #expect(config.stderr.contains("FIFO or pipe"), "\(command) stderr: \(config.stderr)")
        }
    }

    @Test func replayOfStandardInputThatIsNotAFileIsRefusedClearly() async throws {
        let bed = try DaemonTestBed()
        try bed.writeConfig()
        // The child inherits the test runner's standard input: usually /dev/null (a character device), a pipe or
        // a terminal, all refused at once. Only a regular file is read (then as a capture like any other).
        var info = stat()
        let inputIsAFile = fstat(0, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
        let run = try await BuiltBinary.run(["replay", "/dev/stdin", "--config", bed.configPath], timeout: 60)
        if inputIsAFile {
            #expect([0, 65].contains(run.status), "stderr: \(run.stderr)")
        } else {
            #expect(run.status == 66, "stderr: \(run.stderr)")
            #expect(run.stderr.contains("not a regular file"), "stderr: \(run.stderr)")
        }
    }

    @Test func decodeOfBadDataExits65() async throws {
        let bad = try await BuiltBinary.run(["decode", "zz"])
        #expect(bad.status == 65)
        let layout = try await BuiltBinary.run(["decode", "--layout", "m:2-3=zz", "0201061aff4c00"])
        #expect(layout.status == 65)
        let bed = try DaemonTestBed()
        let notACapture = bed.directory + "/x.btsnoop"
        try "not btsnoop".write(toFile: notACapture, atomically: true, encoding: .utf8)
        let capture = try await BuiltBinary.run(["decode", "--btsnoop", notACapture])
        #expect(capture.status == 65, "stdout: \(capture.stdout)")
        let missing = try await BuiltBinary.run(["decode", "--btsnoop", bed.directory + "/none.btsnoop"])
        #expect(missing.status == 66)
    }

    /// Two sightings an hour apart, replayed in real time with `--max-gap 1s`: done in seconds (without the cap
    /// the run would take an hour and hit the timeout).
    @Test func aPacedReplayCapsAnHourLongGap() async throws {
        let bed = try DaemonTestBed()
        try await bed.broker.start()
        try bed.writeConfig()
        let before = DaemonTestBed.iBeaconObservations(minor: 3, start: 1_700_000_000, duration: 2, interval: 1)
        let after = DaemonTestBed.iBeaconObservations(minor: 3, start: 1_700_003_600, duration: 2, interval: 1)
        let capture = try bed.writeCapture("gap.btsnoop", before + after)
        let run = try await BuiltBinary.run(
            ["replay", capture, "--speed", "1", "--max-gap", "1s", "--config", bed.configPath],
            timeout: 90)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(logValue(run.stderr, message: "capture replayed", key: "hci_events") == "\(before.count + after.count)")
    }

    @Test func maxGapIsAReplayOptionWithADuration() async throws {
        #expect(try await BuiltBinary.run(["run", "--max-gap", "1s"]).status == 64)
        #expect(try await BuiltBinary.run(["replay", "x.btsnoop", "--max-gap", "soon"]).status == 64)
        #expect(try await BuiltBinary.run(["replay", "x.btsnoop", "--max-gap", "0"]).status == 64)
    }
}
