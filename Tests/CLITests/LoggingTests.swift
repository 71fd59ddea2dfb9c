import BeaconConfig
import Testing

@testable import BeaconBridgeCLI

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LoggingTests {
    @Test func logfmtQuotesAndEscapes() {
        #expect(LogfmtFormatter.value("plain") == "plain")
        #expect(LogfmtFormatter.value("") == "\"\"")
        #expect(LogfmtFormatter.value("two words") == "\"two words\"")
        #expect(LogfmtFormatter.value("a=b") == "\"a=b\"")
        #expect(LogfmtFormatter.value("say \"hi\"") == "\"say \\\"hi\\\"\"")
        #expect(LogfmtFormatter.value("C:\\x") == "\"C:\\\\x\"")
        #expect(LogfmtFormatter.value("line\nbreak\ttab\r") == "\"line\\nbreak\\ttab\\r\"")
        #expect(LogfmtFormatter.value("bell\u{7}") == "\"bell\\u0007\"")
        #expect(LogfmtFormatter.value("café") == "café")
        #expect(LogfmtFormatter.key("rssi@1m") == "rssi_1m")
        #expect(LogfmtFormatter.key("") == "_")
    }

    @Test func lineLayoutIsStable() {
        let line = LogfmtFormatter.line(
            timestamp: "2026-11-30T10:00:00.000Z", level: .warning, label: "mqtt",
            message: "broker unreachable",
            metadata: ["port": 1883, "host": "broker.lan", "error": "connection refused"])
        #expect(
            line == "ts=2026-11-30T10:00:00.000Z level=warning logger=mqtt msg=\"broker unreachable\" "
                + "error=\"connection refused\" host=broker.lan port=1883")
    }

    @Test func levelsFilterAndAutoclosuresAreLazy() {
        let recorder = RecordingLogHandler.Recorder()
        var logger = Logger(label: "scanner", handler: RecordingLogHandler(level: .info, recorder: recorder))
        var evaluated = false
        logger.debug(
            {
                evaluated = true
                return "hidden"
            }())
        logger.info("shown")
        logger.logLevel = .error
        logger.warning("hidden too")
        logger.error("failed", metadata: ["adapter": "hci0"])
        #expect(!evaluated)
        #expect(recorder.records.map(\.message) == ["shown", "failed"])
        #expect(recorder.records.last?.logfmt == "level=error logger=scanner msg=failed adapter=hci0")
    }

    @Test func loggerMetadataMergesUnderCallMetadata() {
        let recorder = RecordingLogHandler.Recorder()
        var logger = Logger(label: "x", handler: RecordingLogHandler(recorder: recorder))
        logger[metadataKey: "gateway"] = "pi"
        logger[metadataKey: "room"] = "hall"
        logger.child(label: "y").notice("n", metadata: ["room": "kitchen"])
        #expect(recorder.records.first?.metadata == ["gateway": "pi", "room": "kitchen"])
        #expect(recorder.records.first?.label == "y")
    }

    @Test func secretsNeverReachTheOutput() {
        let recorder = RecordingLogHandler.Recorder()
        let logger = Logger(label: "mqtt", handler: RecordingLogHandler(recorder: recorder))
        let password = Redacted("hunter2")
        logger.info(
            "connecting with \(password)",
            metadata: [
                "password": .secret(password.value),
                "url": .url("mqtts://gw:hunter2@broker.lan:8883/x"),
            ])
        let line = recorder.records.first?.logfmt ?? ""
        #expect(!line.contains("hunter2"))
        #expect(
            line == "level=info logger=mqtt msg=\"connecting with <redacted>\" password=<redacted> "
                + "url=mqtts://gw:***@broker.lan:8883/x")
        #expect(Redacted<String>.url("mqtt://broker.lan:1883") == "mqtt://broker.lan:1883")
        #expect(Redacted<String>.url("mqtt://user@broker") == "mqtt://user@broker")
        #expect("\(Redacted(42))" == "<redacted>")
    }

    @Test func recordingIsThreadSafe() async {
        let recorder = RecordingLogHandler.Recorder()
        let logger = Logger(label: "t", handler: RecordingLogHandler(recorder: recorder))
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for i in 0..<250 { logger.info("m", metadata: ["t": "\(task)", "i": "\(i)"]) } }
            }
        }
        #expect(recorder.records.count == 2000)
    }

    @Test func logfmtHandlerWritesWholeLinesToItsDescriptor() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let handler = LogfmtHandler(level: .info, includesTimestamp: true, fileDescriptor: fds[1])
        let logger = Logger(label: "run", handler: handler)
        logger.info("started", metadata: ["version": "0.1.0"])
        logger.debug("filtered")
        close(fds[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        let text = String(decoding: buffer[0..<max(0, n)], as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1)
        let line = String(lines.first ?? "")
        #expect(line.hasPrefix("ts=20"))
        #expect(line.hasSuffix("Z level=info logger=run msg=started version=0.1.0"))
        let ts = line.dropFirst(3).prefix { $0 != " " }
        #expect(ts.count == "2026-11-30T10:55:01.234Z".count)
    }

    /// `$JOURNAL_STREAM` is `DEVICE:INODE` of the journal stream; only a descriptor that is that stream loses `ts=`.
    @Test func journaldGetsNoTimestamps() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var info = stat()
        try #require(fstat(fds[1], &info) == 0)
        let stream = "\(info.st_dev):\(info.st_ino)"
        let settings = LoggingSettings(level: .warning)
        let underSystemd = LogfmtHandler(
            settings: settings, environment: ["JOURNAL_STREAM": stream], fileDescriptor: fds[1])
        let byHand = LogfmtHandler(settings: settings, environment: [:], fileDescriptor: fds[1])
        #expect(!underSystemd.includesTimestamp && byHand.includesTimestamp)
        #expect(underSystemd.logLevel == .warning)
        // Inherited by a process whose stderr goes elsewhere: another inode, or not DEVICE:INODE at all.
        for other in [
            "\(info.st_dev):\(info.st_ino &+ 1)", "\(info.st_dev &+ 1):\(info.st_ino)", "8:12345", "", "8",
            "a:b", "8:12345:1",
        ] {
            #expect(
                !LogfmtHandler.writesToJournal(environment: ["JOURNAL_STREAM": other], fileDescriptor: fds[1]),
                "\(other)")
            #expect(
                LogfmtHandler(settings: settings, environment: ["JOURNAL_STREAM": other], fileDescriptor: fds[1])
                    .includesTimestamp)
        }
        #expect(LogfmtHandler.writesToJournal(environment: ["JOURNAL_STREAM": stream], fileDescriptor: fds[1]))
        #expect(!LogfmtHandler.writesToJournal(environment: [:], fileDescriptor: fds[1]))

        // What the journal receives: the same line without `ts=`.
        let logger = Logger(label: "run", handler: underSystemd)
        logger.warning("journal", metadata: ["k": "v"])
        close(fds[1])
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fds[0], $0.baseAddress, $0.count) }
        #expect(String(decoding: buffer[0..<max(0, n)], as: UTF8.self) == "level=warning logger=run msg=journal k=v\n")
    }

    @Test func configuredLevelsMap() {
        #expect(Logger.Level(.notice) == .notice)
        #expect(Logger.Level(.debug) < Logger.Level(.error))
    }
}
