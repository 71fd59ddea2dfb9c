import BeaconModel

/// A `RegionMatch` prepared for matching many beacons: patterns normalised once (lower case, no `0x`, decimal
/// value parsed), so matching a new beacon against every region costs string equality only. Same semantics as
/// `RegionMatch.matches`.
struct CompiledRegionMatch: Sendable {
    struct Identifier: Sendable, Equatable {
        package var text: String
        package var number: UInt64?

        package init(_ raw: String) {
            text = RegionMatch.normalized(raw)
            number = UInt64(raw)
        }

        package func equals(_ other: Identifier) -> Bool {
            if let a = number, let b = other.number { return a == b }
            return text == other.text
        }
    }

    /// A beacon's identity in the same normalised form, computed once per (re)match.
    struct Subject {
        package var format: String
        package var identifiers: [Identifier]
        package var address: BluetoothAddress
        package var name: String?

        package init(format: String, identifiers: [String], address: BluetoothAddress, name: String?) {
            self.format = format.lowercased()
            self.identifiers = identifiers.map(Identifier.init)
            self.address = address
            self.name = name
        }
    }

    package let format: String?
    package let identifiers: [Identifier?]
    package let address: BluetoothAddress?
    let namePattern: String?

    package init(_ match: RegionMatch) {
        format = match.format.flatMap { $0 == "*" ? nil : $0.lowercased() }
        identifiers = match.identifiers.map { pattern in pattern.flatMap { $0 == "*" ? nil : Identifier($0) } }
        address = match.address
        namePattern = match.namePattern
    }

    package func matches(_ subject: Subject) -> Bool {
        if let format, format != subject.format { return false }
        if let address, address != subject.address { return false }
        for (index, pattern) in identifiers.enumerated() {
            guard let pattern else { continue }
            guard index < subject.identifiers.count, pattern.equals(subject.identifiers[index]) else { return false }
        }
        if let namePattern {
            guard let name = subject.name, RegionMatch.glob(namePattern, matches: name) else { return false }
        }
        return true
    }
}
