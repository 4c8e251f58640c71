import Foundation

/// ITU-R BS.1770-4 loudness written from the recommendation, independent of libebur128, to
/// check Tapedeck's numbers against: K-weighting (the standard's two biquads, given for
/// 48 kHz), mean square per channel over 400 ms blocks overlapping by 75 %, the −70 LUFS
/// absolute gate and the −10 LU relative gate. Left and right weigh 1.0.
enum BS1770 {
    /// Integrated loudness of 48 kHz planar channels, LUFS.
    static func integratedLoudness(_ channels: [[Float]], sampleRate: Int = 48000) -> Double {
        precondition(sampleRate == 48000, "the coefficients below are the standard's 48 kHz ones")
        let weighted = channels.map(kWeighted)
        let blockFrames = sampleRate * 4 / 10
        let hop = blockFrames / 4
        var blockPowers: [Double] = []
        var start = 0
        while start + blockFrames <= weighted[0].count {
            var sum = 0.0
            for channel in weighted {
                var s = 0.0
                for i in start..<(start + blockFrames) { s += channel[i] * channel[i] }
                sum += s / Double(blockFrames)
            }
            blockPowers.append(sum)
            start += hop
        }
        func loudness(_ power: Double) -> Double { -0.691 + 10 * log10(power) }
        let absolute = blockPowers.filter { loudness($0) > -70 }
        guard !absolute.isEmpty else { return -.infinity }
        let relativeGate = loudness(absolute.reduce(0, +) / Double(absolute.count)) - 10
        let gated = absolute.filter { loudness($0) > relativeGate }
        return loudness(gated.reduce(0, +) / Double(gated.count))
    }

    /// The K-weighting: a high shelf (the head's effect) then the RLB high-pass.
    static func kWeighted(_ x: [Float]) -> [Double] {
        let shelf = biquad(x.map(Double.init), b: [1.53512485958697, -2.69169618940638, 1.19839281085285],
                           a: [-1.69065929318241, 0.73248077421585])
        return biquad(shelf, b: [1.0, -2.0, 1.0], a: [-1.99004745483398, 0.99007225036621])
    }

    private static func biquad(_ x: [Double], b: [Double], a: [Double]) -> [Double] {
        var y = [Double](repeating: 0, count: x.count)
        var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0
        for i in x.indices {
            let v = b[0] * x[i] + b[1] * x1 + b[2] * x2 - a[0] * y1 - a[1] * y2
            x2 = x1; x1 = x[i]; y2 = y1; y1 = v
            y[i] = v
        }
        return y
    }
}
