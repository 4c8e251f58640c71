import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Streams one region's audio from its file, block by block, for offline rendering and the
/// live disk thread (always through a ``LayeredTrackSource``).
///
/// Keeps the reader positioned so consecutive blocks read sequentially; seeks only when the
/// render jumps. Frames past the end of the file read as silence.
final class RegionStream {
    /// The region, with the fades it plays with (``Region/layered(_:crossfadeFrames:)``).
    var region: Region
    let reader: AudioFileReader
    /// Per-channel scratch, `blockFrames` each.
    private let scratch: [UnsafeMutablePointer<Float>]
    private let envelope: UnsafeMutablePointer<Float>
    private let blockFrames: Int
    private var nextSourceFrame: Int64 = -1
    /// NaN and infinite samples read from the file and replaced by silence (a file that did
    /// not come through `import`, which cleans them, may hold some).
    private(set) var nonFiniteSampleCount: Int64 = 0
    /// The file holds integer samples, which cannot be NaN or infinite.
    private let finiteByFormat: Bool

    /// Opens the region's file; throws the reader's error (naming the file) when it cannot.
    init(region: Region, path: String, blockFrames: Int) throws(AudioFileError) {
        self.region = region
        self.reader = try AudioFileReader(path: path, blockFrames: blockFrames)
        self.blockFrames = blockFrames
        finiteByFormat = reader.holdsIntegerSamples
        scratch = (0..<reader.channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        envelope = .allocate(capacity: blockFrames)
    }

    deinit {
        scratch.forEach { $0.deallocate() }
        envelope.deallocate()
    }

    /// Channels of the source file.
    var channelCount: Int { reader.channelCount }

    /// This region's part of the block `[blockStart, blockStart + frameCount)`, as offsets
    /// into the block; nil when it has none.
    func span(blockStart: Int64, frameCount: Int) -> Range<Int>? {
        let start = max(blockStart, region.timelineStartFrame)
        let end = min(blockStart + Int64(frameCount), region.timelineEndFrame)
        guard end > start else { return nil }
        return Int(start - blockStart)..<Int(end - blockStart)
    }

    /// Adds this region's share of the timeline block into `track`, scaled by region gain,
    /// its fade envelope and `transmission` (what the layers above let through, per frame of
    /// the block), then lowers `transmission` under it by its envelope for the layers below.
    /// `coveredAbove` false promises `transmission` is all 1 over this region's span (nothing
    /// above touched it), so a lone region costs no more than before layering. A mono source
    /// feeds every track channel; a stereo source on a mono track is folded to mono at half
    /// level per side.
    func add(blockStart: Int64, frameCount: Int, into track: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
             transmission: UnsafeMutablePointer<Float>, coveredAbove: Bool) throws(AudioFileError) {
        guard let span = span(blockStart: blockStart, frameCount: frameCount) else { return }
        let n = span.count
        let offset = span.lowerBound
        let positionInRegion = blockStart + Int64(offset) - region.timelineStartFrame
        let faded = fillEnvelope(positionInRegion: positionInRegion, frameCount: n)
        let through = transmission + offset
        var weighted = faded
        if coveredAbove {
            // What the layers above leave of this one; wholly hidden, it is not even read.
            var audible = false
            if faded {
                for i in 0..<n { envelope[i] *= through[i]; audible = audible || envelope[i] != 0 }
            } else {
                for i in 0..<n { envelope[i] = through[i]; audible = audible || through[i] != 0 }
            }
            guard audible else { return }
            weighted = true
        }
        try readSource(from: region.sourceOffsetFrame + positionInRegion, frameCount: n)
        if weighted {
            for ch in scratch { for i in 0..<n { ch[i] *= envelope[i] } }
        }
        let gain = Float(Decibels.toLinear(region.gainDecibels))
        let sourceChannels = channelCount
        if track.count == 1 && sourceChannels > 1 {
            MixKernels.accumulate(scratch[0], into: track[0] + offset, frameCount: n, startGain: gain / 2, endGain: gain / 2)
            MixKernels.accumulate(scratch[1], into: track[0] + offset, frameCount: n, startGain: gain / 2, endGain: gain / 2)
        } else {
            for (c, destination) in track.enumerated() {
                let source = scratch[min(c, sourceChannels - 1)]
                MixKernels.accumulate(source, into: destination + offset, frameCount: n, startGain: gain, endGain: gain)
            }
        }
        // What lies under this region hears it as a fade: 1 − its own envelope.
        if faded {
            _ = fillEnvelope(positionInRegion: positionInRegion, frameCount: n)
            for i in 0..<n { through[i] *= 1 - envelope[i] }
        } else {
            through.update(repeating: 0, count: n)
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
        // Integer samples are finite by construction: only float files need the scan.
        if !finiteByFormat {
            for ch in scratch { nonFiniteSampleCount += Int64(NonFiniteSamples.replace(ch, count: got)) }
        }
        nextSourceFrame = sourceFrame + Int64(n)
    }

    /// Fills `envelope` for the fades this span touches; false when it is all unity.
    private func fillEnvelope(positionInRegion p0: Int64, frameCount n: Int) -> Bool {
        let length = region.lengthFrames
        let touchesIn = region.fadeInFrames > 0 && p0 < region.fadeInFrames
        let touchesOut = region.fadeOutFrames > 0 && p0 + Int64(n) > length - region.fadeOutFrames
        guard touchesIn || touchesOut else { return false }
        for i in 0..<n { envelope[i] = Float(region.envelope(atPosition: p0 + Int64(i))) }
        return true
    }
}
