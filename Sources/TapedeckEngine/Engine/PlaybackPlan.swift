import TapedeckCore
import TapedeckIO
import TapedeckDSP

/// What to play: the audible tracks of a session (or one file), a range, whether to loop,
/// the chains, and the speed. Built on the control thread; the disk thread streams it.
public struct PlaybackPlan: Sendable {
    /// One region and the file it plays from. Regions with a rate other than 1 have already
    /// been resolved to their 1× render (``StretchedRegionCache``).
    public struct Source: Sendable, Equatable {
        /// Absolute path of the audio file.
        public var path: String
        /// The region, at rate 1, with its gain and fades.
        public var region: Region

        /// Creates a source.
        public init(path: String, region: Region) {
            self.path = path
            self.region = region
        }
    }

    /// One track's sources, its chain and its place in the stereo mix.
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
        /// The playback chain (empty: none), run before the fader.
        public var chain: Chain

        /// Creates a track.
        public init(name: String, sources: [Source], channelCount: Int, gain: Float = 1, pan: Double = 0,
                    chain: Chain = Chain()) {
            self.name = name
            self.sources = sources
            self.channelCount = channelCount
            self.gain = gain
            self.pan = pan
            self.chain = chain
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
    /// The master chain (empty: none), run on the mix.
    public var masterChain = Chain()
    /// Tempo and meter, for tempo-synced nodes.
    public var tempoMap: TempoMap

    /// Creates a plan.
    public init(tracks: [Track], sampleRate: Int, startFrame: Int64, endFrame: Int64, loop: Bool,
                tempoMap: TempoMap? = nil) {
        self.tracks = tracks
        self.sampleRate = sampleRate
        self.startFrame = startFrame
        self.endFrame = endFrame
        self.loop = loop
        self.tempoMap = tempoMap ?? TempoMap(sampleRate: sampleRate, tempoBPM: 120,
                                             timeSignature: TimeSignature(beatsPerBar: 4, beatUnit: 4))
    }

    /// The audible tracks of `session` (``Session/isAudible(trackIndex:)``) with their chains
    /// and the master chain, from `from` to `to` (default: the session's end). Opens each
    /// file once to learn its channel count; renders regions with a rate other than 1 into
    /// the session's cache first (once; later plans reuse the render). A chain that does not
    /// parse throws ``ChainContextError``.
    ///
    /// Tracks in `silencing` are left out even when audible (an armed track monitored live
    /// while it records).
    public init(session: Session, folder: SessionFolder, from: Int64 = 0, to: Int64? = nil, loop: Bool = false,
                silencing: Set<Int> = []) throws {
        var tracks: [Track] = []
        let cache = StretchedRegionCache(folder: folder)
        for (i, t) in session.tracks.enumerated() where session.isAudible(trackIndex: i) && !silencing.contains(i) {
            var sources: [Source] = []
            var width = 1
            // Of each stack of takes only the chosen one plays.
            for r in t.activeRegions where r.lengthFrames > 0 {
                let (region, path) = try cache.playable(r)
                let reader = try AudioFileReader(path: path, blockFrames: 16)
                width = max(width, min(reader.channelCount, 2))
                sources.append(Source(path: path, region: region))
            }
            let chain: Chain
            do { chain = try Chain(parsing: t.playbackChain) } catch {
                throw ChainContextError(place: "track \(i + 1) (\(t.name)) chain", error: error)
            }
            tracks.append(Track(name: t.name, sources: sources, channelCount: width,
                                gain: Float(Decibels.toLinear(t.gainDecibels)), pan: t.pan, chain: chain))
        }
        self.init(tracks: tracks, sampleRate: session.sampleRate, startFrame: from,
                  endFrame: max(to ?? session.endFrame, from), loop: loop, tempoMap: session.tempoMap)
        do { masterChain = try Chain(parsing: session.masterChain) } catch {
            throw ChainContextError(place: "master chain", error: error)
        }
    }

    /// One file from its start, as a single centred track.
    public init(file path: String, from: Int64 = 0, to: Int64? = nil, loop: Bool = false) throws(AudioFileError) {
        let reader = try AudioFileReader(path: path, blockFrames: 16)
        let region = Region(file: path, timelineStartFrame: 0, lengthFrames: reader.frameCount)
        let track = Track(name: path, sources: [Source(path: path, region: region)], channelCount: min(reader.channelCount, 2))
        self.init(tracks: [track], sampleRate: reader.sampleRate, startFrame: from,
                  endFrame: max(min(to ?? reader.frameCount, reader.frameCount), from), loop: loop)
    }
}
