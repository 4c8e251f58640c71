import Foundation
import Synchronization

extension RenderCore {
    /// Notes when the takes' first frame arrived at the input, on CLOCK_MONOTONIC: the input
    /// of device frame `startDevice + latency` (what was played at the record point, heard
    /// back), placed on this period's window on the device's clock (``MIDIWindow``, exact
    /// when the device tells its clock, else smoothed from the thread's wake-ups), so a
    /// count-in, a later record point or a late wake-up does not move it.
    ///
    /// Audio thread: arithmetic, atomics and at most one clock read (a vDSO call); no
    /// allocation, no locks.
    func stampFirstFrame(_ set: TakeSet) {
        guard set.startDevice != .max, set.firstFrameNanoseconds.load(ordering: .relaxed) == 0 else { return }
        let rate = Double(max(sampleRate, 1))
        let arrived = set.startDevice &+ set.gate.latencyFrames
        let stamp: Double
        if let window = midi.lastWindow {
            // Frame `lastWindowDeviceFrame + i` arrived at `start + i` frames of time.
            stamp = Double(window.startNanoseconds) + Double(arrived &- midi.lastWindowDeviceFrame) * 1e9 / rate
        } else {
            stamp = Double(monotonicNanoseconds()) - Double(deviceFrame &- arrived) * 1e9 / rate
        }
        // Clamped before the conversion: a Double outside Int64 (or NaN) would trap here.
        let clamped = stamp.isFinite ? min(max(stamp, 1), 9e18) : 1
        set.firstFrameNanoseconds.store(Int64(clamped), ordering: .releasing)
    }
}

extension TakeSet {
    /// The wall-clock time (CLOCK_REALTIME, seconds since 1970) the takes' first frame arrived
    /// at the input, or nil before it has. Any thread.
    public var firstFrameWallClock: Double? {
        let mono = firstFrameNanoseconds.load(ordering: .acquiring)
        guard mono > 0 else { return nil }
        var real = timespec()
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &real)
        clock_gettime(CLOCK_MONOTONIC, &now)
        let offset = (Double(real.tv_sec) - Double(now.tv_sec)) + (Double(real.tv_nsec) - Double(now.tv_nsec)) / 1e9
        return Double(mono) / 1e9 + offset
    }
}
