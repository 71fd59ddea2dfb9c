import BeaconCore

/// `beaconbridge decode --btsnoop FILE`: one JSON line per advertising report (extended fragments joined),
/// then a summary line. Records that are not HCI events, and events that are not advertising reports, are
/// counted and skipped. A malformed event prints an error line (offset counted in the file) and decoding
/// goes on; a truncated record ends the file (the summary names its offset). Records are numbered from 1.
struct DecodeCapture {
    let decoder: BeaconDecoder

    func run(path: String) -> Int32 {
        let bytes: [UInt8]
        switch DecodeFile.read(path) {
        case let .success(read): bytes = read
        case let .failure(failure):
            Output.stdout(JSONValue.object([("error", .string(failure.message))]).serialized)
            return ExitCode.noInput
        }
        var reader: BTSnoopReader
        do {
            reader = try BTSnoopReader(bytes: bytes)
        } catch {
            Output.stdout(JSONValue.object([("error", .string(error.reason)), ("offset", .int(Int64(error.offset)))]).serialized)
            return ExitCode.inputError
        }
        var counts = (records: 0, events: 0, advertisingEvents: 0, reports: 0, beacons: 0, errors: 0)
        var formats: [String: Int] = [:]
        var assembler = ExtendedReportAssembler()
        var fileError: DecodeError?
        while true {
            let record: BTSnoopRecord
            do {
                guard let next = try reader.next() else { break }
                record = next
            } catch {
                fileError = error
                break
            }
            counts.records += 1
            let recordNumber = counts.records
            guard let event = record.hciEvent(datalink: reader.datalink) else { continue }
            counts.events += 1
            var reports: [AdvertisingReport] = []
            do {
                try HCIEventParser.forEachReport(in: Array(event), timestamp: record.unixTime, h4: false) { reports.append($0) }
            } catch {
                counts.errors += 1
                let offset = record.fileOffset + BTSnoopReader.recordHeaderLength + (reader.datalink == .hciUART ? 1 : 0) + error.offset
                Output.stdout(JSONValue.object([
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
                Output.stdout(JSONValue.object([("record", .int(Int64(recordNumber))), ("time", .double(record.unixTime))]
                                               + members).serialized)
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
        Output.stdout(JSONValue.object([("summary", .object(summary))]).serialized)
        return fileError == nil && counts.errors == 0 ? ExitCode.ok : ExitCode.inputError
    }
}
