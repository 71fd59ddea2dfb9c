import BeaconModel

extension RegionMatch {
    /// Whether this match can ever select the beacon with canonical id `beaconID` (docs/beacon-ids.md):
    /// false only when the id proves it cannot (another format, another identifier at a position the match
    /// fixes, another address for an address-keyed id). What the id does not tell (the address of an
    /// identifier-keyed beacon, its local name) is assumed to fit. Home Assistant discovery announces region
    /// entities only for the pairs this allows.
    public func canSelect(beaconID: String) -> Bool {
        let parts = beaconID.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return true }
        let beaconFormat = String(parts[0])
        let rest = String(parts[1])
        if let format, format != "*", format.lowercased() != beaconFormat.lowercased() { return false }
        if let keyAddress = BluetoothAddress(string: rest) {
            // `<format>:<address>` and `mac:<address>`: the address is known, the identifiers are not.
            if let address, address != keyAddress { return false }
            return true
        }
        let beaconIdentifiers = rest.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        for (index, pattern) in identifiers.enumerated() {
            guard let pattern, pattern != "*" else { continue }
            guard index < beaconIdentifiers.count,
                RegionMatch.identifier(beaconIdentifiers[index], equals: pattern)
            else { return false }
        }
        return true
    }
}
