import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Streams one region's audio from its file, block by block, for offline rendering and the
/// live disk thread (always through a ``LayeredTrackSource``).
///
/// Holds no file: the file is borrowed from a ``ReaderPool`` for each read, shared with the
/// other regions of the same file, so open files do not grow with the region count. The
/// scratch it reads into belongs to its ``LayeredTrackSource`` (one set per track, not per
/// region). Reads follow on without a seek when the file was left where this read starts.
/// Frames past the end of the file read as silence.
final class RegionStream {
    /// The region, with the fades it plays with (``Region/layered(_:crossfadeFrames:)``).
    var region: Region
    let path: String
    /// Channels of the source file (learned when the track was probed).
    let channelCount: Int
    /// For a file wider than stereo, each channel's gain into the track's left and right
    /// (``StereoDownmix``); nil for mono and stereo files, which play as they are.
    private let downmix: (left: [Float], right: [Float])?
    private let blockFrames: Int
    private let pool: ReaderPool
    /// NaN and infinite samples read from the file and replaced by silence (a file that did
    /// not come through `import`, which cleans them, may hold some).
    private(set) var nonFiniteSampleCount: Int64 = 0

    /// A region of `path`, whose file has `channelCount` channels (folded to the track's by
    /// `downmix` when there are more than two); opens nothing yet.
    init(region: Region, path: String, channelCount: Int, downmix: StereoDownmix? = nil, blockFrames: Int, pool: ReaderPool) {
        self.region = region
        self.path = path
        self.channelCount = channelCount
        if channelCount > 2 {
            // A file that came without its downmix (never from the pool's probe) still loses no
            // channel: the rule for a file that names no layout.
            let rule = downmix ?? StereoDownmix(layout: ChannelLayout(channelCount: channelCount, positions: nil))
            self.downmix = (rule.leftGains, rule.rightGains)
        } else {
            self.downmix = nil
        }
        self.blockFrames = blockFrames
        self.pool = pool
    }

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
    /// level per side; a wider source is folded by its downmix (``StereoDownmix``: every
    /// channel at its stated gain into left and right, and on a mono track their mean).
    /// `scratch` (at least two channels, and one per channel of the widest file) and
    /// `envelope` are the track's, `blockFrames` each.
    ///
    /// Disk thread and export workers (it reads the file), never the audio thread.
    func add(blockStart: Int64, frameCount: Int, into track: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
             transmission: UnsafeMutablePointer<Float>, coveredAbove: Bool,
             scratch allScratch: [UnsafeMutablePointer<Float>], envelope: UnsafeMutablePointer<Float>) throws(AudioFileError) {
        guard let span = span(blockStart: blockStart, frameCount: frameCount) else { return }
        let n = span.count
        let offset = span.lowerBound
        let positionInRegion = blockStart + Int64(offset) - region.timelineStartFrame
        let scratch = channelCount == allScratch.count ? allScratch : Array(allScratch.prefix(channelCount))
        let faded = fillEnvelope(positionInRegion: positionInRegion, frameCount: n, into: envelope)
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
        try readSource(from: region.sourceOffsetFrame + positionInRegion, frameCount: n, into: scratch)
        if weighted {
            for ch in scratch { for i in 0..<n { ch[i] *= envelope[i] } }
        }
        let gain = Float(Decibels.toLinear(region.gainDecibels))
        let sourceChannels = scratch.count
        if let downmix {
            for c in 0..<sourceChannels {
                let left = downmix.left[c] * gain, right = downmix.right[c] * gain
                if track.count == 1 {
                    let both = (left + right) / 2
                    if both != 0 { MixKernels.accumulate(scratch[c], into: track[0] + offset, frameCount: n, startGain: both, endGain: both) }
                    continue
                }
                if left != 0 { MixKernels.accumulate(scratch[c], into: track[0] + offset, frameCount: n, startGain: left, endGain: left) }
                if right != 0 { MixKernels.accumulate(scratch[c], into: track[1] + offset, frameCount: n, startGain: right, endGain: right) }
            }
        } else if track.count == 1 && sourceChannels > 1 {
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
            _ = fillEnvelope(positionInRegion: positionInRegion, frameCount: n, into: envelope)
            for i in 0..<n { through[i] *= 1 - envelope[i] }
        } else {
            through.update(repeating: 0, count: n)
        }
    }

    private func readSource(from sourceFrame: Int64, frameCount n: Int, into scratch: [UnsafeMutablePointer<Float>]) throws(AudioFileError) {
        let got = try pool.withReader(path: path, blockFrames: blockFrames) { (lease) throws(AudioFileError) -> Int in
            let reader = lease.reader
            guard sourceFrame < reader.frameCount else { return 0 }
            if sourceFrame != lease.nextFrame { try reader.seek(toFrame: sourceFrame) }
            var got = 0
            while got < n {
                let k = try reader.read(into: scratch.map { $0 + got }, frameCount: n - got)
                if k == 0 { break }
                got += k
            }
            lease.nextFrame = sourceFrame + Int64(got)
            // Integer samples are finite by construction: only float files need the scan.
            if !reader.holdsIntegerSamples {
                for ch in scratch { nonFiniteSampleCount += Int64(NonFiniteSamples.replace(ch, count: got)) }
            }
            return got
        }
        for ch in scratch where got < n { (ch + got).update(repeating: 0, count: n - got) }
    }

    /// Fills `envelope` for the fades this span touches; false when it is all unity.
    private func fillEnvelope(positionInRegion p0: Int64, frameCount n: Int, into envelope: UnsafeMutablePointer<Float>) -> Bool {
        let length = region.lengthFrames
        let touchesIn = region.fadeInFrames > 0 && p0 < region.fadeInFrames
        let touchesOut = region.fadeOutFrames > 0 && p0 + Int64(n) > length - region.fadeOutFrames
        guard touchesIn || touchesOut else { return false }
        for i in 0..<n { envelope[i] = Float(region.envelope(atPosition: p0 + Int64(i))) }
        return true
    }
}
