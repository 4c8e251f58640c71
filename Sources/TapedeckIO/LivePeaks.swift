import Synchronization

/// The waveform of a take while it is being recorded, for the screen to draw as it grows:
/// one peak amplitude (the loudest absolute sample of any channel) per bucket of
/// ``bucketFrames`` frames, and the same at two coarser levels (×16 and ×256), so a column
/// of any zoom is read from a handful of buckets.
///
/// The take's writer thread (not real-time) appends what it has just written; the UI thread
/// reads. They share one small mutex, held by the writer only to publish a block's finished
/// buckets and by the reader for one row of columns (``read(_:)``): the audio thread never
/// comes near it. The writer's running maxima stay its own, outside the lock.
public final class LivePeaks: @unchecked Sendable {
    /// Frames per finest bucket (the peak files' level 0).
    public static let bucketFrames = PeakFile.defaultBaseBucketFrames
    /// How much coarser each level is than the one before.
    public static let levelFactor = 16
    /// Levels kept: 256, 4096 and 65536 frames a bucket.
    static let levelCount = 3

    /// What the reader sees: the finished buckets of every level and the frames appended.
    struct Published {
        var levels: [[Float]] = Array(repeating: [], count: LivePeaks.levelCount)
        var frameCount: Int64 = 0
    }

    /// What only the writer touches: each level's running maximum and frames in it.
    struct Running {
        var maximum = [Float](repeating: 0, count: LivePeaks.levelCount)
        var frames = [Int](repeating: 0, count: LivePeaks.levelCount)
        /// Buckets finished since the last publish, per level.
        var pending: [[Float]] = Array(repeating: [], count: LivePeaks.levelCount)
    }

    private let published = Mutex(Published())
    /// The writer thread's alone (a take has one writer thread), hence unchecked Sendable.
    private var running = Running()

    /// Empty peaks; room for about six minutes at 48 kHz is made now (256 KB), so the writer
    /// seldom grows them (each growth copies under the lock).
    public init() {
        published.withLock { p in
            for l in 0..<LivePeaks.levelCount { p.levels[l].reserveCapacity((1 << 16) >> (4 * l)) }
        }
        for l in 0..<LivePeaks.levelCount { running.pending[l].reserveCapacity(64) }
    }

    static func framesPerBucket(level: Int) -> Int64 { Int64(bucketFrames) << (4 * level) }

    /// Adds `frameCount` frames written to the take, one buffer per channel (the first
    /// `channelCount` of `channels`). The take's writer thread only.
    public func append(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, channelCount: Int, frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, LivePeaks.bucketFrames - running.frames[0])
            var top = running.maximum[0]
            for c in 0..<channelCount {
                let p = channels[c] + done
                for i in 0..<n {
                    let v = abs(p[i])
                    // Written so a NaN changes nothing.
                    if v > top { top = v }
                }
            }
            running.maximum[0] = top
            advance(by: n)
            done += n
        }
        publish(added: Int64(frameCount))
    }

    /// Adds `frameCount` frames of silence (input the audio thread lost, written as silence).
    /// The take's writer thread only.
    public func appendSilence(frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, LivePeaks.bucketFrames - running.frames[0])
            advance(by: n)
            done += n
        }
        publish(added: Int64(frameCount))
    }

    /// Moves the finest level on by `n` frames (within its bucket), closing buckets upwards.
    private func advance(by n: Int) {
        running.frames[0] += n
        var level = 0
        while level < LivePeaks.levelCount && running.frames[level] == (level == 0 ? LivePeaks.bucketFrames : LivePeaks.levelFactor) {
            let value = running.maximum[level]
            running.pending[level].append(value)
            running.maximum[level] = 0
            running.frames[level] = 0
            level += 1
            if level < LivePeaks.levelCount {
                running.maximum[level] = max(running.maximum[level], value)
                running.frames[level] += 1
            }
        }
    }

    private func publish(added frames: Int64) {
        published.withLock { p in
            for l in 0..<LivePeaks.levelCount where !running.pending[l].isEmpty {
                p.levels[l].append(contentsOf: running.pending[l])
            }
            p.frameCount += frames
        }
        for l in 0..<LivePeaks.levelCount { running.pending[l].removeAll(keepingCapacity: true) }
    }

    /// Frames appended so far. Any thread.
    public var frameCount: Int64 { published.withLock { $0.frameCount } }

    /// Reads the peaks under the lock once, for a row of columns. Keep `body` short. Any thread.
    public func read(_ body: (Reader) -> Void) {
        published.withLock { p in body(Reader(levels: p.levels, frameCount: p.frameCount)) }
    }

    /// The peaks as they stand, for one read.
    public struct Reader {
        let levels: [[Float]]
        /// Frames appended so far.
        public let frameCount: Int64

        /// The loudest absolute sample (linear) over take frames `[from, to)`, read from the
        /// coarsest level whose buckets are at most a sixteenth of the range (the screen's
        /// peak files are read so too); the newest frames, past a coarse level's last
        /// finished bucket, from the finer ones. 0 outside what was written.
        public func amplitude(fromFrame: Int64, toFrame: Int64) -> Float {
            let from = max(0, fromFrame), to = min(toFrame, frameCount)
            guard to > from else { return 0 }
            var level = 0
            while level + 1 < LivePeaks.levelCount && LivePeaks.framesPerBucket(level: level + 1) <= (to - from) / 16 { level += 1 }
            var top: Float = 0
            var start = from
            while level >= 0 && start < to {
                let size = LivePeaks.framesPerBucket(level: level)
                let buckets = levels[level]
                let covered = Int64(buckets.count) * size
                var b = Int(start / size)
                let last = Int(min(to, covered) - 1) / Int(size)
                while b <= last && b < buckets.count {
                    top = max(top, buckets[b])
                    b += 1
                }
                // What this level has not finished yet, from the finer one.
                start = max(start, covered)
                level -= 1
            }
            return top
        }
    }
}
