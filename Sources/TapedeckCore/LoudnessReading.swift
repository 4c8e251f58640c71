/// EBU R128 loudness of a signal at one moment, as a meter shows it. Loudness is in LUFS
/// (−∞ for silence or before enough audio has been heard), true peak in dBTP.
public struct LoudnessReading: Sendable, Equatable {
    /// Loudness of the last 400 ms.
    public var momentaryLUFS: Double
    /// Loudness of the last 3 s.
    public var shortTermLUFS: Double
    /// Gated loudness of everything since the meter started.
    public var integratedLUFS: Double
    /// Highest true (inter-sample) peak since the meter started, over all channels.
    public var truePeakDecibels: Double

    /// Creates a reading.
    public init(momentaryLUFS: Double, shortTermLUFS: Double, integratedLUFS: Double, truePeakDecibels: Double) {
        self.momentaryLUFS = momentaryLUFS
        self.shortTermLUFS = shortTermLUFS
        self.integratedLUFS = integratedLUFS
        self.truePeakDecibels = truePeakDecibels
    }

    /// Nothing heard yet.
    public static let silent = LoudnessReading(momentaryLUFS: -.infinity, shortTermLUFS: -.infinity,
                                               integratedLUFS: -.infinity, truePeakDecibels: -.infinity)
}
