import BeaconFormats
import BeaconModel
import HCIScanner

/// `beaconbridge decode --btsnoop FILE`: one JSON line per advertising report (extended fragments joined),
/// then a summary line. Records that are not HCI events, and events that are not advertising reports, are
/// counted and skipped. A malformed event prints an error line (offset counted in the file) and decoding
/// goes on; a truncated record ends the file (the summary names its offset, exit 65). Records are numbered
/// from 1. The file is read record by record through a fixed buffer (`BTSnoopFileReader`): memory does not
/// grow with the capture. Only regular files are read (a FIFO or pipe is refused, exit 66).
struct DecodeCapture {
    let decoder: BeaconDecoder

    func run(path: String) -> Int32 {
        let reader: BTSnoopFileReader
        do throws(BTSnoopFileReader.Failure) {
            reader = try BTSnoopFileReader(path: path)
        } catch {
            switch error {
            case let .io(failure):
                Output.stdout(JSONValue.object([("error", .string(failure.description))]).serialized)
                return failure.isMissingOrUnreadable ? ExitCode.noInput : ExitCode.ioError
            case let .damaged(damage):
                Output.stdout(
                    JSONValue.object([("error", .string(damage.reason)), ("offset", .int(Int64(damage.offset)))])
                        .serialized)
                return ExitCode.dataError
            }
        }
        var counts = (records: 0, events: 0, advertisingEvents: 0, reports: 0, beacons: 0, errors: 0)
        var formats: [String: Int] = [:]
        var assembler = ExtendedReportAssembler()
        var fileError: DecodeError?
        var readError: String?
        reading: while true {
            let record: BTSnoopRecord
            do throws(BTSnoopFileReader.Failure) {
                guard let next = try reader.next() else { break reading }
                record = next
            } catch {
                switch error {
                case let .damaged(damage): fileError = damage
                case let .io(failure): readError = failure.description
                }
                break reading
            }
            counts.records += 1
            let recordNumber = counts.records
            guard let event = record.hciEvent(datalink: reader.datalink) else { continue }
            counts.events += 1
            var reports: [AdvertisingReport] = []
            do {
                try HCIEventParser.forEachReport(in: Array(event), timestamp: record.unixTime, h4: false) {
                    reports.append($0)
                }
            } catch {
                counts.errors += 1
                let offset =
                    record.fileOffset + BTSnoopReader.recordHeaderLength + (reader.datalink == .hciUART ? 1 : 0)
                    + error.offset
                Output.stdout(
                    JSONValue.object([
                        ("record", .int(Int64(recordNumber))), ("error", .string(error.reason)),
                        ("offset", .int(Int64(offset))),
                    ]).serialized)
                continue
            }
            guard !reports.isEmpty else { continue }
            counts.advertisingEvents += 1
            for report in reports {
                guard let ready = assembler.add(report) else { continue }
                let decoded = decoder.decode(ready)
                counts.reports += 1
                counts.beacons += decoded.beacons.count
                for beacon in decoded.beacons { formats[beacon.format, default: 0] += 1 }
                guard case let .object(members) = decoded.json() else { continue }
                Output.stdout(
                    JSONValue.object(
                        [("record", .int(Int64(recordNumber))), ("time", .double(record.unixTime))]
                            + members
                    ).serialized)
            }
        }
        var summary: [(String, JSONValue)] = [
            ("records", .int(Int64(counts.records))), ("hci_events", .int(Int64(counts.events))),
            ("advertising_events", .int(Int64(counts.advertisingEvents))), ("reports", .int(Int64(counts.reports))),
            ("beacons", .int(Int64(counts.beacons))),
            ("formats", .object(formats.sorted { $0.key < $1.key }.map { ($0.key, .int(Int64($0.value))) })),
            ("errors", .int(Int64(counts.errors))),
        ]
        if let fileError {
            summary.append(("error", .string(fileError.reason)))
            summary.append(("offset", .int(Int64(fileError.offset))))
        }
        if let readError { summary.append(("error", .string(readError))) }
        Output.stdout(JSONValue.object([("summary", .object(summary))]).serialized)
        if readError != nil { return ExitCode.ioError }
        return fileError == nil && counts.errors == 0 ? ExitCode.ok : ExitCode.dataError
    }
}
