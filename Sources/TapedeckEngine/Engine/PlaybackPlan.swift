import TapedeckCore
import TapedeckIO
import TapedeckDSP

/// What to play: the audible tracks of a session (or one file), a range and whether to loop.
/// Built on the control thread; the disk thread streams it.
public struct PlaybackPlan: Sendable {
    /// One region, resolved to an absolute file path and linear gain.
    public struct Source: Sendable, Equatable {
        /// Absolute path of the audio file.
        public var path: String
        /// Timeline frame of the region's first frame.
        public var timelineStartFrame: Int64
        /// Frame in the file where the region starts.
        public var sourceOffsetFrame: Int64
        /// Length on the timeline.
        public var lengthFrames: Int64
        /// Region gain, linear.
        public var gain: Float
        /// Linear fade-in length.
        public var fadeInFrames: Int64
        /// Linear fade-out length.
        public var fadeOutFrames: Int64

        /// Creates a source.
        public init(path: String, timelineStartFrame: Int64, sourceOffsetFrame: Int64, lengthFrames: Int64,
                    gain: Float = 1, fadeInFrames: Int64 = 0, fadeOutFrames: Int64 = 0) {
            self.path = path
            self.timelineStartFrame = timelineStartFrame
            self.sourceOffsetFrame = sourceOffsetFrame
            self.lengthFrames = lengthFrames
            self.gain = gain
            self.fadeInFrames = fadeInFrames
            self.fadeOutFrames = fadeOutFrames
        }
    }

    /// One track's sources and its place in the stereo mix.
    public struct Track: Sendable, Equatable {
        /// Display name.
        public var name: String
        /// The regions.
        public var sources: [Source]
        /// 1 (mono) or 2 (stereo): the widest source, capped at 2.
        public var channelCount: Int
        /// Track fader, linear.
        public var gain: Float
        /// −1…+1.
        public var pan: Double

        /// Creates a track.
        public init(name: String, sources: [Source], channelCount: Int, gain: Float = 1, pan: Double = 0) {
            self.name = name
            self.sources = sources
            self.channelCount = channelCount
            self.gain = gain
            self.pan = pan
        }

        /// Left and right gains into the master bus (track gain × pan law).
        public var busGains: (left: Float, right: Float) {
            let g = PanLaw.gains(channelCount: channelCount, pan: pan)
            return (Float(g.left) * gain, Float(g.right) * gain)
        }
    }

    /// The tracks that are heard.
    public var tracks: [Track]
    /// Frames per second of every position.
    public var sampleRate: Int
    /// Where playback starts.
    public var startFrame: Int64
    /// Where playback ends (or loops back to ``startFrame``).
    public var endFrame: Int64
    /// Whether to loop over `startFrame..<endFrame` until stopped.
    public var loop: Bool
    /// Speed, mode and pitch at the start (``Engine/setTimePitch(_:)`` changes them live).
    public var timePitch: TimePitchSettings = .normal

    /// Creates a plan.
    public init(tracks: [Track], sampleRate: Int, startFrame: Int64, endFrame: Int64, loop: Bool) {
        self.tracks = tracks
        self.sampleRate = sampleRate
        self.startFrame = startFrame
        self.endFrame = endFrame
        self.loop = loop
    }

    /// The audible tracks of `session` (``Session/isAudible(trackIndex:)``), from `from` to
    /// `to` (default: the session's end). Opens each file once to learn its channel count.
    public init(session: Session, folder: SessionFolder, from: Int64 = 0, to: Int64? = nil, loop: Bool = false) throws(AudioFileError) {
        var tracks: [Track] = []
        for (i, t) in session.tracks.enumerated() where session.isAudible(trackIndex: i) {
            var sources: [Source] = []
            var width = 1
            for r in t.regions where r.lengthFrames > 0 {
                let path = folder.absolutePath(of: r.file)
                let reader = try AudioFileReader(path: path, blockFrames: 16)
                width = max(width, min(reader.channelCount, 2))
                sources.append(Source(path: path, timelineStartFrame: r.timelineStartFrame, sourceOffsetFrame: r.sourceOffsetFrame,
                                      lengthFrames: r.lengthFrames, gain: Float(Decibels.toLinear(r.gainDecibels)),
                                      fadeInFrames: r.fadeInFrames, fadeOutFrames: r.fadeOutFrames))
            }
            tracks.append(Track(name: t.name, sources: sources, channelCount: width,
                                gain: Float(Decibels.toLinear(t.gainDecibels)), pan: t.pan))
        }
        self.init(tracks: tracks, sampleRate: session.sampleRate, startFrame: from,
                  endFrame: max(to ?? session.endFrame, from), loop: loop)
    }

    /// One file from its start, as a single centred track.
    public init(file path: String, from: Int64 = 0, to: Int64? = nil, loop: Bool = false) throws(AudioFileError) {
        let reader = try AudioFileReader(path: path, blockFrames: 16)
        let source = Source(path: path, timelineStartFrame: 0, sourceOffsetFrame: 0, lengthFrames: reader.frameCount)
        let track = Track(name: path, sources: [source], channelCount: min(reader.channelCount, 2))
        self.init(tracks: [track], sampleRate: reader.sampleRate, startFrame: from,
                  endFrame: max(min(to ?? reader.frameCount, reader.frameCount), from), loop: loop)
    }
}
