import Synchronization
import TapedeckIO

/// Retroactive capture: the last N seconds of input, always kept in memory while armed, so a
/// part played before anyone pressed record can still become a take.
///
/// The audio thread appends every period; the control thread copies the newest N seconds
/// out when asked. The buffer holds two seconds more than N, so the span being copied is
/// never the span being overwritten (a copy takes milliseconds).
public final class RetroBuffer: @unchecked Sendable {
    /// Channels kept.
    public let channelCount: Int
    /// Frames a keep returns at most.
    public let keepFrames: Int
    private let capacityFrames: Int
    private let storage: UnsafeMutablePointer<Float>
    /// Frames appended since the start (only grows). Audio thread only.
    private var writtenFrames: Int64 = 0
    /// Frames a keep may read: all appended, less what the device holds (``beginHold()``).
    private let visible = Atomic<Int64>(0)
    /// The engine's device frame of the first frame appended (-1 until then).
    private let firstDeviceFrameValue = Atomic<Int64>(-1)
    /// Where the device's hold began (-1: none). Audio thread only.
    private var holdAt: Int64 = -1
    /// Spans of silence for device time that passed unheard (xruns), oldest first: a ring of
    /// (first frame, count) pairs, stored before the frames they cover become visible.
    private let gapFields: UnsafeMutablePointer<Atomic<Int64>>
    private let gapCount = Atomic<Int64>(0)
    static let gapCapacity = 64

    /// Allocates room for `seconds` (+2) of `channelCount` channels. Control thread.
    public init(seconds: Double, sampleRate: Int, channelCount: Int) {
        self.channelCount = max(channelCount, 1)
        keepFrames = max(1, Int(seconds * Double(sampleRate)))
        capacityFrames = keepFrames + 2 * sampleRate
        storage = .allocate(capacity: capacityFrames * self.channelCount)
        storage.initialize(repeating: 0, count: capacityFrames * self.channelCount)
        gapFields = .allocate(capacity: 2 * RetroBuffer.gapCapacity)
        for i in 0..<(2 * RetroBuffer.gapCapacity) { (gapFields + i).initialize(to: Atomic(0)) }
    }

    deinit {
        storage.deallocate()
        gapFields.deinitialize(count: 2 * RetroBuffer.gapCapacity)
        gapFields.deallocate()
    }

    /// Appends `frameCount` frames, one pointer per channel.
    ///
    /// Audio thread: no allocation, no locks.
    func append(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        let start = writtenFrames
        if start == 0 && frameCount > 0 && firstDeviceFrameValue.load(ordering: .relaxed) < 0 {
            firstDeviceFrameValue.store(currentDeviceFrame, ordering: .releasing)
        }
        var slot = Int(start % Int64(capacityFrames))
        let c = channelCount
        for i in 0..<frameCount {
            for ch in 0..<c { storage[slot * c + ch] = channels[ch][i] }
            slot += 1
            if slot == capacityFrames { slot = 0 }
        }
        writtenFrames = start + Int64(frameCount)
        publish()
    }

    /// Appends `frameCount` frames of silence (device time that passed unheard), and notes
    /// where it is (inside a hold, the hold's end notes all of it).
    ///
    /// Audio thread: no allocation, no locks.
    func appendSilence(frameCount: Int) {
        let start = writtenFrames
        guard start > 0, frameCount > 0 else { return }
        zero(from: start, count: Int64(frameCount))
        writtenFrames = start + Int64(frameCount)
        if holdAt < 0 { noteGap(from: start, count: Int64(frameCount)) }
        publish()
    }

    /// The device may have lost frames just before this cycle and will tell later: what is
    /// appended from now on is not shown to a keep until it does (``endHold()``).
    ///
    /// Audio thread: no allocation, no locks.
    func beginHold() {
        guard holdAt < 0 else { return }
        holdAt = writtenFrames
    }

    /// The device told: what was heard while it held is silence, as in a take (read by a
    /// clock it could not trust, it may be another cycle's input; see
    /// `RenderCore.endHold(_:resolved:tells:)`), together with what it skipped meanwhile,
    /// and it is all shown again.
    ///
    /// Audio thread: no allocation, no locks.
    func endHold() {
        guard holdAt >= 0 else { return }
        let from = holdAt
        holdAt = -1
        let count = writtenFrames - from
        if count > 0 {
            zero(from: from, count: count)
            noteGap(from: from, count: count)
        }
        publish()
    }

    /// Audio thread: no allocation, no locks.
    private func publish() {
        visible.store(holdAt >= 0 ? holdAt : writtenFrames, ordering: .releasing)
    }

    /// Audio thread: no allocation, no locks.
    private func zero(from start: Int64, count: Int64) {
        var slot = Int(start % Int64(capacityFrames))
        for _ in 0..<min(count, Int64(capacityFrames)) {
            for ch in 0..<channelCount { storage[slot * channelCount + ch] = 0 }
            slot += 1
            if slot == capacityFrames { slot = 0 }
        }
    }

    /// Notes a span of silence, joined to the last one when it follows on from it.
    ///
    /// Audio thread: no allocation, no locks.
    private func noteGap(from start: Int64, count: Int64) {
        let n = gapCount.load(ordering: .relaxed)
        if n > 0 {
            let slot = Int((n - 1) % Int64(RetroBuffer.gapCapacity)) * 2
            let lastStart = gapFields[slot].load(ordering: .relaxed)
            let lastCount = gapFields[slot + 1].load(ordering: .relaxed)
            if lastStart + lastCount >= start {
                gapFields[slot + 1].store(max(lastCount, start + count - lastStart), ordering: .releasing)
                return
            }
        }
        let slot = Int(n % Int64(RetroBuffer.gapCapacity)) * 2
        gapFields[slot].store(start, ordering: .relaxed)
        gapFields[slot + 1].store(count, ordering: .relaxed)
        gapCount.store(n + 1, ordering: .releasing)
    }

    /// The spans of silence (device time that passed unheard) inside frames `first..<end`,
    /// as (frame counted from `first`, count). Control thread.
    public func gaps(from first: Int64, to end: Int64) -> [(frame: Int64, count: Int64)] {
        let n = gapCount.load(ordering: .acquiring)
        var out: [(frame: Int64, count: Int64)] = []
        for k in max(0, n - Int64(RetroBuffer.gapCapacity) + 4)..<n {
            let slot = Int(k % Int64(RetroBuffer.gapCapacity)) * 2
            let start = gapFields[slot].load(ordering: .acquiring)
            let count = gapFields[slot + 1].load(ordering: .acquiring)
            let lo = max(start, first), hi = min(start + count, end)
            if hi > lo { out.append((lo - first, hi - lo)) }
        }
        return out
    }

    /// The engine's device frame for the next append; the audio thread sets it before
    /// appending, so the first frame's device time is known.
    var currentDeviceFrame: Int64 = 0

    /// Frames a keep may take so far (all appended, less what the device still holds). Any thread.
    public var framesWritten: Int64 { visible.load(ordering: .acquiring) }

    /// The device frame of frame 0 (nil until something was appended). Any thread.
    public var firstDeviceFrame: Int64? {
        let v = firstDeviceFrameValue.load(ordering: .acquiring)
        return v < 0 ? nil : v
    }

    /// Writes the newest ``keepFrames`` (fewer if less has been heard), from no earlier than
    /// index `earliest` and ending before `latest`, to `path`; returns the index (in frames
    /// appended since the start) of the first frame written and the count. Control thread.
    public func keep(to path: String, format: AudioFileFormat, metadata: TakeMetadata? = nil,
                     notBefore earliest: Int64 = 0, before latest: Int64? = nil) throws(AudioFileError) -> (firstFrame: Int64, frameCount: Int) {
        let end = min(visible.load(ordering: .acquiring), latest ?? .max)
        let first = min(end, max(0, end - Int64(keepFrames), earliest))
        let count = Int(end - first)
        let writer = try AudioFileWriter(path: path, format: format, expectedFrameCount: Int64(count), metadata: metadata)
        let block = 4096
        let buffers = (0..<channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: block) }
        defer { buffers.forEach { $0.deallocate() } }
        var done = 0
        do {
            while done < count {
                let n = min(block, count - done)
                var slot = Int((first + Int64(done)) % Int64(capacityFrames))
                for i in 0..<n {
                    for ch in 0..<channelCount { buffers[ch][i] = storage[slot * channelCount + ch] }
                    slot += 1
                    if slot == capacityFrames { slot = 0 }
                }
                try writer.write(buffers.map { UnsafePointer($0) }, frameCount: n)
                done += n
            }
            try writer.close()
        } catch {
            unlink(path)
            throw error
        }
        return (first, count)
    }
}

#if canImport(Glibc)
import Glibc
#endif
