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
    /// Frames appended since the start (only grows).
    private let written = Atomic<Int64>(0)
    /// The engine's device frame of the first frame appended (-1 until then).
    private let firstDeviceFrameValue = Atomic<Int64>(-1)

    /// Allocates room for `seconds` (+2) of `channelCount` channels. Control thread.
    public init(seconds: Double, sampleRate: Int, channelCount: Int) {
        self.channelCount = max(channelCount, 1)
        keepFrames = max(1, Int(seconds * Double(sampleRate)))
        capacityFrames = keepFrames + 2 * sampleRate
        storage = .allocate(capacity: capacityFrames * self.channelCount)
        storage.initialize(repeating: 0, count: capacityFrames * self.channelCount)
    }

    deinit { storage.deallocate() }

    /// Appends `frameCount` frames, one pointer per channel.
    ///
    /// Audio thread: no allocation, no locks.
    func append(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) {
        let start = written.load(ordering: .relaxed)
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
        written.store(start + Int64(frameCount), ordering: .releasing)
    }

    /// Appends `frameCount` frames of silence (device time that passed unheard).
    ///
    /// Audio thread: no allocation, no locks.
    func appendSilence(frameCount: Int) {
        let start = written.load(ordering: .relaxed)
        guard start > 0 else { return }
        var slot = Int(start % Int64(capacityFrames))
        for _ in 0..<min(frameCount, capacityFrames) {
            for ch in 0..<channelCount { storage[slot * channelCount + ch] = 0 }
            slot += 1
            if slot == capacityFrames { slot = 0 }
        }
        written.store(start + Int64(frameCount), ordering: .releasing)
    }

    /// The engine's device frame for the next append; the audio thread sets it before
    /// appending, so the first frame's device time is known.
    var currentDeviceFrame: Int64 = 0

    /// Frames appended so far. Any thread.
    public var framesWritten: Int64 { written.load(ordering: .acquiring) }

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
        let end = min(written.load(ordering: .acquiring), latest ?? .max)
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
