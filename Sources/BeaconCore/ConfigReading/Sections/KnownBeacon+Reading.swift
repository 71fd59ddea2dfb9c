extension KnownBeacon {
    /// One element of `beacons:`: `id` (required) and `name`.
    public init(from r: inout ConfigReader) {
        self.init(id: r.requiredString("id") ?? "", name: r.string("name"))
    }
}
