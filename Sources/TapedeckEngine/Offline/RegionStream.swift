import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Streams one region's audio from its file, block by block, for offline rendering.
///
/// Keeps the reader positioned so consecutive blocks read sequentially; seeks only when the
/// render jumps. Frames past the end of the file read as silence.
final class RegionStream {
    let region: Region
    let reader: AudioFileReader
    /// Per-channel scratch, `blockFrames` each.
    private let scratch: [UnsafeMutablePointer<Float>]
    private let envelope: UnsafeMutablePointer<Float>
    private let blockFrames: Int
    private var nextSourceFrame: Int64 = -1
    /// NaN and infinite samples read from the file and replaced by silence (a file that did
    /// not come through `import`, which cleans them, may hold some).
    private(set) var nonFiniteSampleCount: Int64 = 0

    /// Opens the region's file; throws the reader's error (naming the file) when it cannot.
    init(region: Region, path: String, blockFrames: Int) throws(AudioFileError) {
        self.region = region
        self.reader = try AudioFileReader(path: path, blockFrames: blockFrames)
        self.blockFrames = blockFrames
        scratch = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        envelope = .allocate(capacity: blockFrames)
    }

    deinit {
        scratch.forEach { $0.deallocate() }
        envelope.deallocate()
    }

    /// Channels of the source file.
    var channelCount: Int { reader.channelCount }

    /// Adds this region's share of the timeline block `[blockStart, blockStart + frameCount)`
    /// into `track`, scaled by region gain and fades. A mono source feeds every track channel;
    /// a stereo source on a mono track is folded to mono at half level per side.
    func add(blockStart: Int64, frameCount: Int, into track: UnsafeBufferPointer<UnsafeMutablePointer<Float>>) throws(AudioFileError) {
        let start = max(blockStart, region.timelineStartFrame)
        let end = min(blockStart + Int64(frameCount), region.timelineEndFrame)
        guard end > start else { return }
        let n = Int(end - start)
        let offset = Int(start - blockStart)
        let positionInRegion = start - region.timelineStartFrame
        try readSource(from: region.sourceOffsetFrame + positionInRegion, frameCount: n)

        let gain = Float(Decibels.toLinear(region.gainDecibels))
        if applyFades(positionInRegion: positionInRegion, frameCount: n) {
            for ch in scratch { for i in 0..<n { ch[i] *= envelope[i] } }
        }
        let sourceChannels = channelCount
        if track.count == 1 && sourceChannels > 1 {
            MixKernels.accumulate(scratch[0], into: track[0] + offset, frameCount: n, startGain: gain / 2, endGain: gain / 2)
            MixKernels.accumulate(scratch[1], into: track[0] + offset, frameCount: n, startGain: gain / 2, endGain: gain / 2)
            return
        }
        for (c, destination) in track.enumerated() {
            let source = scratch[min(c, sourceChannels - 1)]
            MixKernels.accumulate(source, into: destination + offset, frameCount: n, startGain: gain, endGain: gain)
        }
    }

    private func readSource(from sourceFrame: Int64, frameCount n: Int) throws(AudioFileError) {
        if sourceFrame != nextSourceFrame {
            if sourceFrame < reader.frameCount { try reader.seek(toFrame: sourceFrame) }
            nextSourceFrame = sourceFrame
        }
        var got = 0
        if sourceFrame < reader.frameCount {
            while got < n {
                let k = try reader.read(into: scratch.map { $0 + got }, frameCount: n - got)
                if k == 0 { break }
                got += k
            }
        }
        for ch in scratch where got < n { (ch + got).update(repeating: 0, count: n - got) }
        for ch in scratch { nonFiniteSampleCount += Int64(NonFiniteSamples.replace(ch, count: got)) }
        nextSourceFrame = sourceFrame + Int64(n)
    }

    /// Fills `envelope` for the fades this span touches; false when it is all unity.
    private func applyFades(positionInRegion p0: Int64, frameCount n: Int) -> Bool {
        let length = region.lengthFrames
        let fadeIn = region.fadeInFrames, fadeOut = region.fadeOutFrames
        let touchesIn = fadeIn > 0 && p0 < fadeIn
        let touchesOut = fadeOut > 0 && p0 + Int64(n) > length - fadeOut
        guard touchesIn || touchesOut else { return false }
        for i in 0..<n {
            let p = p0 + Int64(i)
            var g = 1.0
            if fadeIn > 0 && p < fadeIn { g *= Double(p) / Double(fadeIn) }
            if fadeOut > 0 && p >= length - fadeOut { g *= Double(length - p) / Double(fadeOut) }
            envelope[i] = Float(g)
        }
        return true
    }
}
