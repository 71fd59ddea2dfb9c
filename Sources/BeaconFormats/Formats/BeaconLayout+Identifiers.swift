import BeaconModel

extension BeaconLayout {
    enum Rendering { case decimal, uuid, hex }

    /// Identifier rendering: 2 bytes decimal, 16 bytes dashed UUID, anything else 0x-hex.
    @inline(__always)
    func rendering(length: Int) -> Rendering {
        if hexIdentifiers { return .hex }
        return length == 2 ? .decimal : length == 16 ? .uuid : .hex
    }

    package func render(_ bytes: [UInt8], _ range: Range<Int>, littleEndian: Bool) -> String {
        switch rendering(length: range.count) {
        case .decimal: HexText.decimal(HexText.unsigned(bytes, range, littleEndian: littleEndian))
        case .uuid: HexText.uuid(bytes, range, reversed: littleEndian)
        case .hex: HexText.hex(bytes, range, reversed: littleEndian, prefix: true)
        }
    }

    /// `<name>:<id1>:<id2>...` rendered straight from the PDU in one allocation (hex without `0x`); the same
    /// text as `Beacon.canonicalID(format:identifiers:)` over the rendered identifiers. Every identifier must
    /// already have been checked to lie inside the PDU.
    func canonicalID(_ bytes: [UInt8], base: Int, count: Int) -> String {
        var total = name.utf8.count
        for field in identifiers {
            guard let range = resolved(field, count: count) else { continue }
            switch rendering(length: range.count) {
            case .decimal:
                total +=
                    1
                    + HexText.decimalLength(
                        HexText.unsigned(bytes, range.shifted(by: base), littleEndian: field.littleEndian))
            case .uuid: total += 37
            case .hex: total += 1 + 2 * range.count
            }
        }
        var name = self.name
        return String(unsafeUninitializedCapacity: total) { out in
            var position = 0
            name.withUTF8 { utf8 in
                let length = min(utf8.count, out.count)
                if length > 0, let source = utf8.baseAddress, let target = out.baseAddress {
                    target.update(from: source, count: length)
                }
                position = length
            }
            for field in identifiers {
                guard let relative = resolved(field, count: count), position < out.count else { continue }
                let range = relative.shifted(by: base)
                out[position] = UInt8(ascii: ":")
                position += 1
                switch rendering(length: range.count) {
                case .decimal:
                    position = HexText.writeDecimal(
                        HexText.unsigned(bytes, range, littleEndian: field.littleEndian),
                        to: out, at: position)
                case .uuid:
                    position = HexText.writeUUID(bytes, range, reversed: field.littleEndian, to: out, at: position)
                case .hex:
                    position = HexText.writeHex(bytes, range, reversed: field.littleEndian, to: out, at: position)
                }
            }
            return position
        }
    }
}
