import BeaconModel
import BeaconRuntime
import GATTLink
import SecureDFU

#if canImport(Glibc)
import Glibc
#endif

/// `beaconbridge gatt --address … dfu --package FILE.zip`: a Secure DFU update (`SecureDFUSession`) of one
/// device. The package is read and validated before anything is connected; progress goes to stdout as lines
/// (`progress 42% 6912/16384 bytes 1830 B/s`) or JSON lines with `--json`.
extension GATTCommand {
    static func runDFU(_ options: Options, path: String) -> Int32 {
        let package: DFUPackage
        do throws(DFUPackageFile.Failure) {
            package = try DFUPackageFile.load(path)
        } catch {
            Output.stderr("beaconbridge gatt: dfu: \(error)")
            if case .unreadable = error { return ExitCode.noInput }
            return ExitCode.dataError
        }
        guard let address = options.address else { return ExitCode.usage }
        Output.stderr(
            "beaconbridge gatt: dfu: \(path): application of \(package.firmware.count) bytes, CRC-32 "
                + "\(hex32(package.firmwareCRC32)), init packet \(package.initPacket.count) bytes"
                + (package.firmwareVersion.map { ", version \($0)" } ?? ""))
        var sessionOptions = SecureDFUSession.Options()
        sessionOptions.receiptInterval = options.receiptInterval
        sessionOptions.reconnects = options.reconnects
        sessionOptions.force = options.force
        let session = SecureDFUSession(package: package, options: sessionOptions)
        let started = SystemClock.monotonic()
        do {
            let outcome = try session.run(
                connect: { () throws(GATTLinkError) -> GATTConnection in
                    try GATTConnection.open(
                        adapter: options.adapter, peer: address, randomAddress: options.random,
                        timeout: options.connectTimeout, slots: ConnectionSlots(limit: 1),
                        requestTimeout: options.requestTimeout
                    ) { notice in Output.stderr("beaconbridge gatt: \(notice)") }
                },
                report: { report($0, options: options) })
            switch outcome {
            case .completed(let progress):
                let seconds = SystemClock.monotonic() - started
                emit(
                    options,
                    text: "dfu complete \(progress.bytes) bytes crc \(hex32(package.firmwareCRC32)) in "
                        + "\(rounded(seconds)) s",
                    json: [
                        ("event", .string("complete")), ("bytes", .int(Int64(progress.bytes))),
                        ("crc", .string(hex32(package.firmwareCRC32))), ("seconds", .double(rounded(seconds))),
                    ])
            case .upToDate(let version):
                emit(
                    options, text: "dfu up to date: the device reports version \(version) (--force sends anyway)",
                    json: [("event", .string("up_to_date")), ("version", .int(Int64(version)))])
            }
            return ExitCode.ok
        } catch {
            Output.stderr("beaconbridge gatt: \(error)")
            switch error {
            case .link(let linkError): return exitCode(for: linkError)
            case .transfer(let transferError): return exitCode(for: transferError)
            }
        }
    }

    /// 65 for a refused package or a malformed answer, 75 for a timeout, 69 for the rest (the target refused,
    /// checksums disagreed after the retries, the link stayed down).
    static func exitCode(for error: DFUError) -> Int32 {
        switch error {
        case .invalidPackage, .malformedResponse: return ExitCode.dataError
        case .timeout: return ExitCode.tempFail
        case .link(_, let gattError):
            if case .timeout = gattError { return ExitCode.tempFail }
            if case .malformedResponse = gattError { return ExitCode.dataError }
            return ExitCode.unavailable
        case .target, .checksumMismatch, .disconnected: return ExitCode.unavailable
        }
    }

    private static func report(_ event: SecureDFUSession.Event, options: Options) {
        switch event {
        case .connected(let attempt, let mtu):
            Output.stderr(
                "beaconbridge gatt: dfu: connected (ATT_MTU \(mtu))" + (attempt > 0 ? ", reconnect \(attempt)" : ""))
        case .installedVersion(let version):
            Output.stderr(
                "beaconbridge gatt: dfu: installed version "
                    + (version.map { "\($0)" } ?? "unknown (no numeric firmware revision 2a26)"))
        case .progress(let progress):
            let rate = progress.bytesPerSecond.map { Int($0.rounded()) }
            emit(
                options,
                text: "progress \(progress.percent)% \(progress.bytes)/\(progress.totalBytes) bytes"
                    + (rate.map { " \($0) B/s" } ?? ""),
                json: [
                    ("event", .string("progress")), ("percent", .int(Int64(progress.percent))),
                    ("bytes", .int(Int64(progress.bytes))), ("total", .int(Int64(progress.totalBytes))),
                    ("bytes_per_second", rate.map { .int(Int64($0)) } ?? .null),
                ])
        case .reconnecting(let attempt, let delay, let reason):
            emit(
                options, text: "reconnecting \(attempt) in \(rounded(delay)) s after: \(reason)",
                json: [
                    ("event", .string("reconnecting")), ("attempt", .int(Int64(attempt))),
                    ("delay", .double(rounded(delay))), ("reason", .string(reason)),
                ])
        }
    }

    private static func emit(_ options: Options, text: String, json: [(String, JSONValue)]) {
        Output.stdout(options.json ? JSONValue.object(json).serialized : text)
    }

    private static func rounded(_ value: Double) -> Double { (value * 10).rounded() / 10 }

    static func hex32(_ value: UInt32) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}
