/// Frequency of a steady tone by counting rising zero crossings, with linear interpolation
/// between samples so the estimate is far finer than one sample period.
enum Frequency {
    static func estimate(_ x: [Float], sampleRate: Int, range: Range<Int>) -> Double {
        var first: Double?
        var last = 0.0
        var crossings = 0
        var i = range.lowerBound + 1
        while i < range.upperBound {
            let a = x[i - 1], b = x[i]
            if a < 0 && b >= 0 {
                let t = Double(i - 1) + Double(-a / (b - a))
                if first == nil { first = t } else { crossings += 1; last = t }
            }
            i += 1
        }
        guard let f = first, crossings > 0 else { return 0 }
        return Double(crossings) * Double(sampleRate) / (last - f)
    }
}
