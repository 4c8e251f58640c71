/// Supplies input frames to a live time-pitch processor (``LiveStretcher``, ``Varispeed``).
public protocol TimePitchSource: AnyObject {
    /// Writes up to `frameCount` frames into one buffer per channel; returns how many
    /// (fewer only at the end of the input, after which silence is assumed).
    ///
    /// Audio thread when the processor runs there: no allocation, no locks.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int
}
