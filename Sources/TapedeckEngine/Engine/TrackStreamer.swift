import TapedeckIO

/// Renders one track's regions, with region gain and fades, into timeline-aligned blocks.
/// Runs on the disk thread: it reads files.
final class TrackStreamer {
    private struct OpenSource {
        var source: PlaybackPlan.Source
        var reader: AudioFileReader
        /// The file frame the reader will return next (to skip needless seeks).
        var nextFileFrame: Int64 = -1
    }

    let channelCount: Int
    let blockFrames: Int
    private var sources: [OpenSource]
    private let scratch: [UnsafeMutablePointer<Float>]
    /// The rendered block, one buffer per track channel.
    let output: UnsafeMutablePointer<UnsafeMutablePointer<Float>>

    /// Opens every source file. Control thread (before the disk thread starts).
    init(track: PlaybackPlan.Track, blockFrames: Int) throws(AudioFileError) {
        channelCount = track.channelCount
        self.blockFrames = blockFrames
        var open: [OpenSource] = []
        var widest = 1
        for s in track.sources {
            let r = try AudioFileReader(path: s.path, blockFrames: blockFrames)
            widest = max(widest, r.channelCount)
            open.append(OpenSource(source: s, reader: r))
        }
        sources = open
        scratch = (0..<widest).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        output = .allocate(capacity: channelCount)
        for ch in 0..<channelCount { output[ch] = .allocate(capacity: blockFrames) }
    }

    deinit {
        scratch.forEach { $0.deallocate() }
        for ch in 0..<channelCount { output[ch].deallocate() }
        output.deallocate()
    }

    /// Renders timeline frames `[start, start + frameCount)` into ``output``.
    /// A file that fails mid-way throws; the caller reports it and plays silence.
    func render(start: Int64, frameCount: Int) throws(AudioFileError) {
        for ch in 0..<channelCount { output[ch].update(repeating: 0, count: frameCount) }
        let end = start + Int64(frameCount)
        for i in sources.indices {
            let s = sources[i].source
            let a = max(start, s.timelineStartFrame), b = min(end, s.timelineStartFrame + s.lengthFrames)
            if a >= b { continue }
            let fileFrame = s.sourceOffsetFrame + (a - s.timelineStartFrame)
            if sources[i].nextFileFrame != fileFrame {
                try sources[i].reader.seek(toFrame: fileFrame)
            }
            let n = Int(b - a)
            let reader = sources[i].reader
            var got = 0
            while got < n {
                let chunk = try reader.read(into: scratch.map { $0 + got }, frameCount: n - got)
                if chunk == 0 { break }
                got += chunk
            }
            sources[i].nextFileFrame = fileFrame + Int64(got)
            let fileChannels = reader.channelCount
            let offset = Int(a - start)
            for k in 0..<got {
                let posInRegion = a - s.timelineStartFrame + Int64(k)
                var g = s.gain
                if s.fadeInFrames > 0 && posInRegion < s.fadeInFrames { g *= Float(posInRegion) / Float(s.fadeInFrames) }
                let fromEnd = s.lengthFrames - posInRegion
                if s.fadeOutFrames > 0 && fromEnd <= s.fadeOutFrames { g *= Float(fromEnd - 1) / Float(s.fadeOutFrames) }
                for ch in 0..<channelCount {
                    let src = scratch[min(ch, fileChannels - 1)]
                    output[ch][offset + k] += src[k] * g
                }
            }
        }
    }
}
