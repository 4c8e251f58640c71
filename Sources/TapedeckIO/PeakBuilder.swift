/// Builds a ``PeakFile`` from audio as it streams past: a recording take, an import, or a
/// file being scanned. Keeps only the finished level-0 buckets plus one bucket in progress.
///
/// Not thread-safe; a builder belongs to the thread that feeds it (the disk thread).
/// ``append(channels:frameCount:)`` does not allocate except when the bucket list grows,
/// which happens once per many seconds of audio and amortises to nothing.
public final class PeakBuilder {
    /// Channels fed in.
    public let channelCount: Int
    /// Frames per level-0 bucket.
    public let baseBucketFrames: Int
    /// Frames appended so far.
    public private(set) var frameCount: Int64 = 0

    private var finished: [Float] = []
    private let runMin: UnsafeMutablePointer<Float>
    private let runMax: UnsafeMutablePointer<Float>
    private var framesInBucket = 0

    /// A builder for `channelCount` channels (at least 1).
    public init(channelCount: Int, baseBucketFrames: Int = PeakFile.defaultBaseBucketFrames) {
        self.channelCount = max(1, channelCount)
        self.baseBucketFrames = max(1, baseBucketFrames)
        runMin = .allocate(capacity: self.channelCount)
        runMax = .allocate(capacity: self.channelCount)
        resetRun()
        // About ten minutes of stereo at 48 kHz before the first growth.
        finished.reserveCapacity(1 << 16)
    }

    deinit {
        runMin.deallocate()
        runMax.deallocate()
    }

    /// Adds `frameCount` frames from one buffer per channel. Buffers beyond ``channelCount``
    /// are ignored; missing ones count as silence.
    public func append(channels: [UnsafePointer<Float>], frameCount: Int) {
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, baseBucketFrames - framesInBucket)
            var ch = 0
            while ch < channelCount {
                var low = runMin[ch]
                var high = runMax[ch]
                if ch < channels.count {
                    let src = channels[ch] + done
                    var i = 0
                    while i < n {
                        let v = src[i]
                        // Written so a NaN changes nothing.
                        if v < low { low = v }
                        if v > high { high = v }
                        i += 1
                    }
                } else {
                    low = min(low, 0)
                    high = max(high, 0)
                }
                runMin[ch] = low
                runMax[ch] = high
                ch += 1
            }
            advance(by: n)
            done += n
        }
    }

    /// Adds `frameCount` interleaved frames of ``channelCount`` channels.
    func append(interleaved: UnsafePointer<Float>, frameCount: Int) {
        let c = channelCount
        var done = 0
        while done < frameCount {
            let n = min(frameCount - done, baseBucketFrames - framesInBucket)
            var ch = 0
            while ch < c {
                var low = runMin[ch]
                var high = runMax[ch]
                var p = interleaved + done * c + ch
                var i = 0
                while i < n {
                    let v = p.pointee
                    if v < low { low = v }
                    if v > high { high = v }
                    p += c
                    i += 1
                }
                runMin[ch] = low
                runMax[ch] = high
                ch += 1
            }
            advance(by: n)
            done += n
        }
    }

    /// The peaks of everything appended so far (the bucket in progress included), stamped
    /// with `sourceStamp`. The builder stays usable.
    public func peakFile(sourceStamp: FileStamp) -> PeakFile {
        var level0 = finished
        if framesInBucket > 0 { appendRun(to: &level0) }
        return PeakFile(channelCount: channelCount, sourceFrameCount: frameCount, sourceStamp: sourceStamp,
                        level0: level0, baseBucketFrames: baseBucketFrames)
    }

    /// Writes the peaks of everything appended so far to `peakPath`, stamped with the current
    /// size and mtime of `sourcePath` (so call it after the audio file is complete). May be
    /// called again after more appends: the writer does so for crash safety.
    @discardableResult
    public func finish(peakPath: String, sourcePath: String) throws(AudioFileError) -> PeakFile {
        guard let stamp = FileStamp.of(path: sourcePath) else {
            throw AudioFileError(path: sourcePath, reason: "cannot write its peaks: the audio file is missing")
        }
        let peaks = peakFile(sourceStamp: stamp)
        try peaks.save(path: peakPath)
        return peaks
    }

    private func advance(by n: Int) {
        framesInBucket += n
        frameCount += Int64(n)
        if framesInBucket == baseBucketFrames {
            appendRun(to: &finished)
            resetRun()
            framesInBucket = 0
        }
    }

    private func appendRun(to level: inout [Float]) {
        for ch in 0..<channelCount {
            // A bucket of nothing but NaN has no extremes; draw it as silence.
            let valid = runMin[ch] <= runMax[ch]
            level.append(valid ? runMin[ch] : 0)
            level.append(valid ? runMax[ch] : 0)
        }
    }

    private func resetRun() {
        for ch in 0..<channelCount {
            runMin[ch] = .infinity
            runMax[ch] = -.infinity
        }
    }
}
