import BeaconModel

extension GatewayCalibration {
    /// One pair heard both ways: `difference` = level of `a` hearing `b` minus level of `b` hearing `a`, an
    /// observation of `d_a - d_b`, with its variance.
    package struct Pair {
        package var a: Int
        package var b: Int
        package var difference: Double
        package var variance: Double
        package var samples: Int
    }

    /// Weighted least squares with a Gaussian prior (docs/rooms.md, "Self-calibration"): the posterior mean and
    /// covariance of `d = g - t` given every pair's difference, then `g` and `t` split by their priors.
    package static func fit(levels: [Int: Level], gateways: [String], settings: Settings, time: Timestamp) -> Solution {
        let n = gateways.count
        let stride = settings.maximumGateways
        let receive2 = settings.receiveSigma * settings.receiveSigma
        let transmit2 = settings.transmitSigma * settings.transmitSigma
        let prior2 = max(receive2 + transmit2, 1e-6)
        let asymmetry2 = settings.asymmetrySigma * settings.asymmetrySigma
        var pairs: [Pair] = []
        for a in 0..<n {
            for b in (a + 1)..<n {
                guard let ab = levels[a * stride + b], let ba = levels[b * stride + a] else { continue }
                pairs.append(
                    Pair(
                        a: a, b: b, difference: ab.median - ba.median,
                        variance: max(asymmetry2 + noise(ab) + noise(ba), 1e-6), samples: ab.count + ba.count))
            }
        }
        // Precision matrix and right-hand side of the posterior of d.
        var precision = [Double](repeating: 0, count: n * n)
        var rhs = [Double](repeating: 0, count: n)
        for i in 0..<n { precision[i * n + i] = 1 / prior2 }
        for pair in pairs {
            let w = 1 / pair.variance
            precision[pair.a * n + pair.a] += w
            precision[pair.b * n + pair.b] += w
            precision[pair.a * n + pair.b] -= w
            precision[pair.b * n + pair.a] -= w
            rhs[pair.a] += w * pair.difference
            rhs[pair.b] -= w * pair.difference
        }
        guard let factor = Cholesky(precision, size: n) else {
            // Cannot happen with a positive prior (the matrix is diagonally dominant plus a positive diagonal);
            // answer the prior rather than trap.
            return prior(gateways: gateways, settings: settings, time: time)
        }
        let d = factor.solve(rhs)
        var covariance = [Double](repeating: 0, count: n * n)
        for column in 0..<n {
            var unit = [Double](repeating: 0, count: n)
            unit[column] = 1
            let solved = factor.solve(unit)
            for row in 0..<n { covariance[row * n + column] = solved[row] }
        }
        let groups = components(n, pairs)
        let share = receive2 / prior2
        var offsets: [Offset] = []
        for i in 0..<n {
            let mine = pairs.filter { $0.a == i || $0.b == i }
            let squares = mine.reduce(0.0) {
                let residual = $1.difference - (d[$1.a] - d[$1.b])
                return $0 + residual * residual
            }
            let residual = mine.count > 1 ? (squares / Double(mine.count)).squareRoot() : 0
            let group = (0..<n).filter { groups[$0] == groups[i] }
            let unseen = settings.gainSigma * settings.gainSigma
            var uncertainty = (receive2 + unseen).squareRoot()
            var confidence = 0.0
            if group.count > 1 {
                // The variance of d_i less its group's mean: the part pairs can identify.
                let m = Double(group.count)
                var across = 0.0
                var withMine = 0.0
                for j in group {
                    withMine += covariance[i * n + j]
                    for k in group { across += covariance[j * n + k] }
                }
                let posterior = max(covariance[i * n + i] - 2 * withMine / m + across / (m * m), 0)
                let before = prior2 * (1 - 1 / m)
                uncertainty = (share * share * posterior + receive2 * transmit2 / prior2 + unseen * (1 - 1 / m))
                    .squareRoot()
                confidence = max(0, min(1, 1 - posterior / before))
                // Residuals beyond twice the pairs' expected spread (asymmetry and the medians' noise) say the
                // model does not hold there (a gateway moved, a one-sided obstruction): trust it less.
                let expected = 2 * (mine.reduce(0) { $0 + $1.variance } / Double(max(mine.count, 1))).squareRoot()
                if residual > expected, residual > 0 { confidence *= (expected / residual) * (expected / residual) }
            }
            offsets.append(
                Offset(
                    gatewayID: gateways[i], receive: share * d[i], transmit: -(transmit2 / prior2) * d[i],
                    difference: d[i], uncertainty: uncertainty, confidence: confidence, pairs: mine.count,
                    samples: mine.reduce(0) { $0 + $1.samples }, residual: residual))
        }
        offsets.sort { $0.gatewayID < $1.gatewayID }
        return Solution(time: time, offsets: offsets, pairs: pairs.count)
    }

    /// The variance of a median of `level.count` samples of spread `level.spread`: about (pi/2) s^2 / n. RSSI
    /// comes in whole dB, so a spread under 1 dB is read as 1 dB.
    package static func noise(_ level: Level) -> Double {
        let spread = max(level.spread, 1)
        return 1.5708 * spread * spread / Double(max(level.count, 1))
    }

    package static func prior(gateways: [String], settings: Settings, time: Timestamp) -> Solution {
        Solution(
            time: time,
            offsets: gateways.sorted().map {
                Offset(
                    gatewayID: $0, receive: 0, transmit: 0, difference: 0,
                    uncertainty: (settings.receiveSigma * settings.receiveSigma + settings.gainSigma
                        * settings.gainSigma)
                        .squareRoot(),
                    confidence: 0, pairs: 0, samples: 0, residual: 0)
            }, pairs: 0)
    }

    /// Connected groups of gateways through the pairs: a label per gateway.
    package static func components(_ n: Int, _ pairs: [Pair]) -> [Int] {
        var label = Array(0..<n)
        func root(_ i: Int) -> Int {
            var i = i
            while label[i] != i { i = label[i] }
            return i
        }
        for pair in pairs {
            let a = root(pair.a)
            let b = root(pair.b)
            if a != b { label[max(a, b)] = min(a, b) }
        }
        return (0..<n).map(root)
    }
}

/// The Cholesky factor L (A = L Lᵀ) of a symmetric positive definite matrix, row-major, and solving with it.
struct Cholesky {
    package let size: Int
    package var lower: [Double]

    package init?(_ matrix: [Double], size: Int) {
        guard matrix.count == size * size else { return nil }
        self.size = size
        lower = [Double](repeating: 0, count: size * size)
        for i in 0..<size {
            for j in 0...i {
                var sum = matrix[i * size + j]
                for k in 0..<j { sum -= lower[i * size + k] * lower[j * size + k] }
                if i == j {
                    guard sum > 0, sum.isFinite else { return nil }
                    lower[i * size + i] = sum.squareRoot()
                } else {
                    lower[i * size + j] = sum / lower[j * size + j]
                }
            }
        }
    }

    /// x with A x = b.
    package func solve(_ b: [Double]) -> [Double] {
        var y = b
        for i in 0..<size {
            for k in 0..<i { y[i] -= lower[i * size + k] * y[k] }
            y[i] /= lower[i * size + i]
        }
        for i in stride(from: size - 1, through: 0, by: -1) {
            for k in (i + 1)..<size { y[i] -= lower[k * size + i] * y[k] }
            y[i] /= lower[i * size + i]
        }
        return y
    }
}
