import BeaconModel

extension BeaconLayout {
    /// Matches one AD structure payload (`bytes[payload]`: manufacturer data from the company code, or service
    /// data from the service UUID) and builds the beacon. Nil when the layout does not match.
    public func beacon(in bytes: [UInt8], payload: Range<Int>, address: BluetoothAddress) -> Beacon? {
        guard payload.lowerBound >= 0, payload.upperBound <= bytes.count else { return nil }
        let base = payload.lowerBound
        let count = payload.count
        for matcher in matchers {
            guard matcher.start + matcher.bytes.count <= count else { return nil }
            var index = base + matcher.start
            for expected in matcher.bytes {
                guard bytes[index] == expected else { return nil }
                index += 1
            }
        }
        // Every identifier and the power must lie inside the PDU before anything is rendered.
        for field in identifiers where resolved(field, count: count) == nil { return nil }
        var measuredPower: Int?
        var rawPower: Int?
        switch power {
        case nil: break
        case let .fixed(value): measuredPower = value
        case let .field(field, correction):
            guard let range = resolved(field, count: count) else { return nil }
            let transmitted = Self.signed(bytes, range.shifted(by: base), littleEndian: field.littleEndian)
            rawPower = transmitted
            measuredPower = transmitted + correction
        }

        var rendered: [String] = []
        rendered.reserveCapacity(identifiers.count)
        for field in identifiers {
            guard let range = resolved(field, count: count) else { return nil }
            rendered.append(render(bytes, range.shifted(by: base), littleEndian: field.littleEndian))
        }
        var fields: [String: FieldValue] = [:]
        for (index, field) in dataFields.enumerated() {
            guard let range = resolved(field, count: count) else { continue }
            let name = index < dataFieldNames.count ? dataFieldNames[index] : "data\(index + 1)"
            fields[name] = dataValue(bytes, range.shifted(by: base), littleEndian: field.littleEndian)
        }
        if let rawPowerFieldName, let rawPower { fields[rawPowerFieldName] = .int(Int64(rawPower)) }
        let beaconID =
            isExtraFrame
            ? Beacon.addressID(format: name, address: address)
            : canonicalID(bytes, base: base, count: count)
        return Beacon(
            format: name, beaconID: beaconID, identifiers: rendered, measuredPower: measuredPower,
            fields: fields, isExtraFrame: isExtraFrame)
    }

    /// The field's byte range relative to the PDU start, nil when it runs past the PDU (a variable-length
    /// field is cut at the PDU end but must start inside it).
    @inline(__always)
    package func resolved(_ field: ByteField, count: Int) -> Range<Int>? {
        if field.end < count { return field.start..<(field.end + 1) }
        if field.variableLength, field.start < count { return field.start..<count }
        return nil
    }

    /// Data fields of up to 8 bytes are unsigned integers (when they fit Int64), longer ones hex strings.
    func dataValue(_ bytes: [UInt8], _ range: Range<Int>, littleEndian: Bool) -> FieldValue {
        if !hexDataFields, range.count <= 8 {
            let value = HexText.unsigned(bytes, range, littleEndian: littleEndian)
            if value <= UInt64(Int64.max) { return .int(Int64(value)) }
        }
        return .string(HexText.hex(bytes, range, reversed: littleEndian))
    }

    /// A signed integer of 1-4 bytes.
    package static func signed(_ bytes: [UInt8], _ range: Range<Int>, littleEndian: Bool) -> Int {
        let raw = HexText.unsigned(bytes, range, littleEndian: littleEndian)
        let bits = UInt64(range.count * 8)
        guard bits > 0, bits < 64 else { return Int(truncatingIfNeeded: raw) }
        let sign = UInt64(1) << (bits - 1)
        return raw & sign != 0 ? Int(raw) - Int(UInt64(1) << bits) : Int(raw)
    }
}

extension Range where Bound == Int {
    @inline(__always)
    func shifted(by offset: Int) -> Range<Int> { (lowerBound + offset)..<(upperBound + offset) }
}
