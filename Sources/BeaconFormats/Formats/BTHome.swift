import BeaconModel

/// BTHome v2 (bthome.io): service data of UUID 0xFCD2. The first byte is the device information (bit 0 encrypted,
/// bit 1 MAC included, bit 2 trigger based, bits 5-7 version, which must be 2); with bit 1 the device's MAC follows
/// (6 bytes, least significant first); then objects: an id byte and a little-endian value (`BTHome.objects`),
/// text, raw and command objects with a length byte. An unknown id ends parsing cleanly (objects before it are
/// kept); a truncated object ends it too.
///
/// Encrypted frames (bit 0): objects, then a 4-byte counter and a 4-byte tag; AES-CCM with the device's bind key,
/// nonce = MAC (most significant byte first) + `d2 fc` + device-information byte + counter. Without a key for the
/// device only `encrypted: true` is reported; a wrong key or a forged frame is refused (no beacon), and so is a
/// plaintext frame from a device that has a key configured (a downgrade). Replayed counters are dropped by the
/// pipeline (`EncryptedCounterGuard`): the decoder is stateless.
///
/// A field repeated in one frame (two temperatures, several buttons) is numbered `_1`, `_2`, ... in object order,
/// as Home Assistant's integration names them.
package enum BTHome {
    package static let uuid: UInt16 = 0xFCD2
    package static let format = "bthome"

    package static func beacon(_ input: borrowing BeaconFormat.FrameInput) -> Beacon? {
        let bytes = input.bytes
        let start = input.payload.lowerBound + 2
        let end = input.payload.upperBound
        guard start < end else { return nil }
        let info = bytes[start]
        guard info >> 5 == 2 else { return nil }
        var offset = start + 1
        var address = input.address
        if info & 0x02 != 0 {
            guard end - offset >= 6 else { return nil }
            var mac: UInt64 = 0
            for index in stride(from: offset + 5, through: offset, by: -1) { mac = mac << 8 | UInt64(bytes[index]) }
            address = BluetoothAddress(rawValue: mac)
            offset += 6
        }
        var fields = [String: FieldValue](minimumCapacity: 8)
        // Most gateways have no bind keys: skip hashing the address then.
        let key = input.keys.isEmpty ? nil : input.keys.bthome[address]
        if info & 0x01 != 0 {
            fields["encrypted"] = .bool(true)
            if let key {
                // ciphertext (at least 2 bytes), counter (4), tag (4)
                guard end - offset >= 10 else { return nil }
                let counterStart = end - 8
                var nonce = [UInt8](repeating: 0, count: 13)
                for index in 0..<6 { nonce[index] = UInt8(truncatingIfNeeded: address.rawValue >> (8 * (5 - index))) }
                nonce[6] = 0xD2
                nonce[7] = 0xFC
                nonce[8] = info
                for index in 0..<4 { nonce[9 + index] = bytes[counterStart + index] }
                let ccm = AESCCM(cipher: key, tagLength: 4)
                guard
                    let plaintext = ccm.open(
                        Array(bytes[offset..<counterStart]), tag: Array(bytes[(end - 4)..<end]),
                        nonce: nonce)
                else { return nil }
                var counter: UInt32 = 0
                for index in stride(from: counterStart + 3, through: counterStart, by: -1) {
                    counter = counter << 8 | UInt32(bytes[index])
                }
                fields["encryption_counter"] = .int(Int64(counter))
                parseObjects(plaintext, 0..<plaintext.count, into: &fields)
            }
        } else {
            guard key == nil else { return nil }
            parseObjects(bytes, offset..<end, into: &fields)
        }
        if info & 0x04 != 0 { fields["trigger_based"] = .bool(true) }
        return Beacon(
            format: format, beaconID: Beacon.addressID(format: format, address: address), identifiers: [],
            measuredPower: nil, fields: fields, isExtraFrame: true)
    }

    /// One parsed object: its table entry and the range of its value.
    package struct Parsed {
        package var object: Object
        package var value: Range<Int>
    }

    /// Reads the objects in `bytes[range]` into `fields`.
    static func parseObjects(_ bytes: [UInt8], _ range: Range<Int>, into fields: inout [String: FieldValue]) {
        var parsed: [Parsed] = []
        parsed.reserveCapacity(8)
        var offset = range.lowerBound
        while offset < range.upperBound {
            let position = objectIndex[Int(bytes[offset])]
            guard position >= 0 else { break }
            let object = objects[Int(position)]
            var valueStart = offset + 1
            var length = object.length
            if object.isVariableLength {
                guard valueStart < range.upperBound else { break }
                let lengthByte = Int(bytes[valueStart])
                length = object.kind == .command ? 1 + lengthByte & 0x1F : lengthByte
                valueStart += 1
            }
            guard length <= range.upperBound - valueStart else { break }
            offset = valueStart + length
            if length == 0 { continue }
            parsed.append(Parsed(object: object, value: valueStart..<offset))
        }
        guard !parsed.isEmpty else { return }
        // Names that occur more than once get `_1`, `_2`, ... (device information does not count). A frame holds
        // a handful of objects: a scan over them is cheaper than hashing names.
        for (index, item) in parsed.enumerated() {
            guard item.object.key != nil else {
                store(item, bytes, name: item.object.name, into: &fields)
                continue
            }
            var before = 0
            var total = 0
            for (other, candidate) in parsed.enumerated()
            where candidate.object.key != nil && candidate.object.name == item.object.name {
                total += 1
                if other < index { before += 1 }
            }
            let name = total > 1 ? item.object.name + "_" + String(before + 1) : item.object.name
            store(item, bytes, name: name, into: &fields)
        }
    }

    package static func unsigned(_ bytes: [UInt8], _ range: Range<Int>) -> UInt64 {
        var value: UInt64 = 0
        for index in range.reversed() { value = value << 8 | UInt64(bytes[index]) }
        return value
    }

    /// Stores `item` as `name` (its object's name, numbered when repeated); event details get the same number.
    package static func store(_ item: Parsed, _ bytes: [UInt8], name: String, into fields: inout [String: FieldValue]) {
        let object = item.object
        let range = item.value
        let suffix = name.utf8.count > object.name.utf8.count ? String(name.dropFirst(object.name.count)) : ""
        switch object.kind {
        case .unsigned, .signed:
            var raw = Int64(bitPattern: unsigned(bytes, range))
            if object.kind == .signed, range.count < 8 {
                let bits = Int64(range.count * 8)
                if raw & (1 << (bits - 1)) != 0 { raw -= 1 << bits }
            }
            if object.multiplier == 1, object.decimals == 0 {
                fields[name] = .int(raw)
            } else {
                if object.multiplier == 1 {
                    // raw / 10^d: the double nearest the decimal value (what Home Assistant's rounding gives).
                    fields[name] = .double(Double(raw) / power(object.decimals))
                } else {
                    // raw x factor rounded to the factor's leading decimal (0.35 -> 0.1), as bthome-ble does.
                    let product = Double(raw) * (Double(object.multiplier) / power(object.decimals))
                    fields[name] = .double(roundedDecimal(product, object.roundTo))
                }
            }
        case .binary:
            fields[name] = .bool(bytes[range.lowerBound] != 0)
        case .timestamp:
            fields[name] = .int(Int64(unsigned(bytes, range)))
        case .text:
            if let text = String(validating: bytes[range], as: UTF8.self) { fields[name] = .string(text) }
        case .raw:
            fields[name] = .string(HexText.hex(bytes, range))
        case .button:
            if let event = buttonEvents[bytes[range.lowerBound]] { fields[name] = .string(event) }
        case .dimmer:
            if let event = dimmerEvents[bytes[range.lowerBound]] {
                fields[name] = .string(event)
                fields[object.name + "_steps" + suffix] = .int(Int64(bytes[range.lowerBound + 1]))
            }
        case .command:
            if let event = commandEvents[bytes[range.lowerBound]] {
                fields[name] = .string(event)
                if range.count > 1 {
                    fields[object.name + "_args" + suffix] = .string(
                        HexText.hex(bytes, (range.lowerBound + 1)..<range.upperBound))
                }
            }
        case .deviceTypeID:
            fields[name] = .int(Int64(unsigned(bytes, range)))
        case .firmware:
            fields[name] = .string(range.reversed().map { String(bytes[$0]) }.joined(separator: "."))
        }
    }

    /// `value` rounded to `decimals` places as its exact binary value dictates (as Python's `round` does): 9 x 0.35
    /// is the double 3.1499999..., which rounds to 3.1, although `value * 10` in floating point is 31.5.
    static func roundedDecimal(_ value: Double, _ decimals: Int) -> Double {
        let scale = power(decimals)
        let scaled = value * scale
        let residual = (-scaled).addingProduct(value, scale)  // value * scale - scaled, exactly (fused)
        var result = scaled.rounded(.toNearestOrEven)
        if abs(scaled - scaled.rounded(.towardZero)) == 0.5, residual != 0 {
            result = residual > 0 ? scaled.rounded(.up) : scaled.rounded(.down)
        }
        return result / scale
    }

    package static func power(_ decimals: Int) -> Double {
        var value = 1.0
        for _ in 0..<decimals { value *= 10 }
        return value
    }
}

extension BeaconFormat {
    package static let bthome = BeaconFormat(
        name: BTHome.format, summary: "BTHome v2 sensors (plain and AES-CCM encrypted)", idShape: .address,
        fields: BTHome.fields,
        syntheticFrame: "020106 0c16d2fc 40 00 01 02 c409 03 bf13",
        quickCheck: .service16(BTHome.uuid, minimumLength: 3),
        decode: { BTHome.beacon($0) })
}

extension BTHome {
    /// The registry's field list: one per distinct object field name, plus the event details and frame flags.
    package static let fields: [BeaconFormat.Field] = {
        var out: [BeaconFormat.Field] = [
            .init("encrypted", .info, "the frame was encrypted (true only)"),
            .init("encryption_counter", .info, "the encrypted frame's counter"),
            .init("trigger_based", .info, "the device sends on change only (device information bit 2)"),
        ]
        var names: Set<String> = Set(out.map(\.name))
        for object in objects where names.insert(object.name).inserted {
            let kind: BeaconFormat.FieldKind
            switch object.kind {
            case .binary: kind = .binary(deviceClass: object.deviceClass)
            case .button, .dimmer, .command: kind = .event
            case .deviceTypeID, .firmware, .text, .raw, .timestamp: kind = .info
            case .unsigned, .signed:
                kind = object.name == "packet_id" ? .info : .reading(deviceClass: object.deviceClass)
            }
            out.append(.init(object.name, unit: object.unit, kind, "object 0x" + String(object.id, radix: 16)))
        }
        out.append(.init("dimmer_steps", .info, "steps of the dimmer event"))
        out.append(.init("command_args", .info, "arguments of the command event, hex"))
        return out
    }()
}
