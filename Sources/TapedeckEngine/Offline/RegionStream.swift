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
    /// into the stereo bus `left`/`right`, scaled by region gain and fades, then by
    /// `trackGain` and the pan law for `pan`.
    func mix(blockStart: Int64, frameCount: Int, trackGain: Double, pan: Double,
             left: UnsafeMutablePointer<Float>, right: UnsafeMutablePointer<Float>) throws(AudioFileError) {
        let start = max(blockStart, region.timelineStartFrame)
        let end = min(blockStart + Int64(frameCount), region.timelineEndFrame)
        guard end > start else { return }
        let n = Int(end - start)
        let busOffset = Int(start - blockStart)
        let positionInRegion = start - region.timelineStartFrame
        let sourceFrame = region.sourceOffsetFrame + positionInRegion

        try readSource(from: sourceFrame, frameCount: n)

        let gain = Decibels.toLinear(region.gainDecibels) * trackGain
        let (gl, gr) = PanLaw.gains(channelCount: channelCount, pan: pan)
        let hasFade = applyFades(positionInRegion: positionInRegion, frameCount: n)
        let l = scratch[0]
        let r = channelCount > 1 ? scratch[1] : scratch[0]
        if hasFade {
            for i in 0..<n {
                l[i] *= envelope[i]
                if channelCount > 1 { r[i] *= envelope[i] }
            }
        }
        MixKernels.accumulate(l, into: left + busOffset, frameCount: n, startGain: Float(gain * gl), endGain: Float(gain * gl))
        MixKernels.accumulate(r, into: right + busOffset, frameCount: n, startGain: Float(gain * gr), endGain: Float(gain * gr))
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
