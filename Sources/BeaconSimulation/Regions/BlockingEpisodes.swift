import BeaconModel

/// The body-blocking episodes of one beacon's run (`RealisticRadio.Blocking`), drawn once up front: exponential
/// gaps of mean `meanInterval` between starts, lengths and depths uniform in their ranges. Both simulators
/// (single-gateway and rooms) draw and read them the same way.
struct BlockingEpisodes {
    private var episodes: [(start: Double, length: Double, depth: Double)] = []
    private var index = 0

    /// Draws the episodes that start before `duration` s (none when `meanInterval` is 0).
    init(_ spec: RealisticRadio.Blocking, duration: Double, random: inout SimulationRandom) {
        guard spec.meanInterval > 0 else { return }
        var t = random.exponential(mean: spec.meanInterval)
        while t < duration {
            let length = random.uniform(spec.minLength, spec.maxLength)
            episodes.append((t, length, random.uniform(spec.minDepth, spec.maxDepth)))
            t += length + random.exponential(mean: spec.meanInterval)
        }
    }

    /// dB lost to blocking at `t` s (0 outside every episode). `t` must not decrease from one call to the next.
    mutating func depth(at t: Double) -> Double {
        while index < episodes.count, episodes[index].start + episodes[index].length <= t {
            index += 1
        }
        return index < episodes.count && episodes[index].start <= t ? episodes[index].depth : 0
    }
}
