import BeaconConfigReading

extension DistanceSettings {
    /// The `distance:` section. Ranges are `validate()`'s (reported by the caller).
    public init(from r: inout ConfigReader) {
        self.init()
        model = r.choice("model", default: model)
        pathLossExponent = r.value("path_loss_exponent", default: pathLossExponent)
        receiverOffsetDB = r.value("receiver_offset_db", default: receiverOffsetDB)
        var powers: [String: Int] = [:]
        for (format, power) in r.namedValues("measured_power", of: Int.self) { powers[format] = power }
        measuredPower = powers
        defaultMeasuredPower = r.value("default_measured_power", default: defaultMeasuredPower)
    }
}
