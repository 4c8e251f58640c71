import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// Renders one track offline, block by block: its regions layered into a track buffer (mono
/// or stereo, as wide as its widest region), through its playback chain, then track gain and
/// pan onto a stereo output of its own (so tracks can render on separate cores and be summed
/// in a fixed order, giving the same bits however many cores ran).
final class TrackRenderer: @unchecked Sendable {
    let index: Int
    let name: String
    let source: LayeredTrackSource
    private let chain: ChainInstance?
    private let buffers: ChannelBuffers
    /// The track's contribution to the stereo bus for the last rendered block.
    let output: StereoBuffer
    private let leftGain: Float
    private let rightGain: Float
    /// Frames the chain delays its output by; regions are read this far ahead.
    let latencyFrames: Int64
    /// A read error met on a worker thread, rethrown by the caller.
    var error: (any Error)?
    /// The chain's nodes that pass audio through instead of working (see ``ChainInstance/problems``).
    var problems: [String] { chain?.problems ?? [] }
    /// The track's MIDI regions, played into its chain.
    private let playlist: MIDIPlaylist?
    private let midi: UnsafeMutablePointer<MIDIEvent>
    private let held = HeldNotes()
    /// Most MIDI events one block passes on (four a frame: more than any playing makes).
    private let midiCapacity: Int
    /// The track's buffers before the fader (what a freeze keeps).
    var preFader: UnsafeBufferPointer<UnsafeMutablePointer<Float>> { buffers.channels }
    /// Channels of the track (1 or 2).
    var channelCount: Int { buffers.channelCount }

    /// A renderer whose chain reads plugin state from `stateFolder` and the files it names
    /// through `files`, and renders offline; `playlist` is the track's MIDI. A MIDI track
    /// renders in stereo (`minimumChannels` 2) whatever its audio.
    init(index: Int, track: Track, source: LayeredTrackSource, chain: Chain?, sampleRate: Int, blockFrames: Int,
         stateFolder: String? = nil, files: (any NodeFiles)? = nil, playlist: MIDIPlaylist? = nil, minimumChannels: Int = 1) {
        self.index = index
        self.name = track.name
        self.source = source
        self.playlist = playlist
        midiCapacity = playlist == nil ? 1 : blockFrames * 4
        midi = .allocate(capacity: midiCapacity)
        let channels = min(2, max(minimumChannels, source.channelCount))
        buffers = ChannelBuffers(channelCount: channels, capacityFrames: blockFrames)
        output = StereoBuffer(frameCount: blockFrames)
        let gain = Decibels.toLinear(track.gainDecibels)
        let pan = PanLaw.gains(channelCount: channels, pan: track.pan)
        leftGain = Float(gain * pan.left)
        rightGain = Float(gain * pan.right)
        if let chain, !chain.entries.isEmpty {
            let instance = chain.instantiate(stateFolder: stateFolder, files: files)
            instance.prepare(format: NodeFormat(sampleRate: Double(sampleRate), channelCount: channels, isRealtime: false),
                             maxFrames: blockFrames)
            self.chain = instance
            latencyFrames = Int64(instance.latencyFrames)
        } else {
            self.chain = nil
            latencyFrames = 0
        }
    }

    deinit {
        chain?.release()
        midi.deallocate()
    }

    /// NaN and infinite samples replaced by silence in this track: read from its files and
    /// made by its chain.
    var nonFiniteSampleCount: Int64 {
        (chain?.nonFiniteSampleCount ?? 0) + source.nonFiniteSampleCount
    }

    /// Feeds the chain the `latencyFrames` of timeline from `startFrame`, discarding its
    /// output, so that afterwards its output lines up with the timeline exactly.
    func prime(startFrame: Int64, transport: TransportInfo) throws {
        var done: Int64 = 0
        while done < latencyFrames {
            let n = Int(min(Int64(buffers.capacityFrames), latencyFrames - done))
            try renderTrackBuffer(timelineFrame: startFrame + done, frameCount: n, transport: transport.advanced(by: Int(done)))
            done += Int64(n)
        }
    }

    /// Renders the block at timeline `blockStart` into ``output``. Errors are kept in
    /// ``error`` (this runs on worker threads).
    func render(blockStart: Int64, frameCount n: Int, transport: TransportInfo) {
        do {
            try renderTrackBuffer(timelineFrame: blockStart + latencyFrames, frameCount: n,
                                  transport: transport.advanced(by: Int(latencyFrames)))
            let l = buffers.channels[0]
            let r = buffers.channelCount > 1 ? buffers.channels[1] : l
            MixKernels.copy(l, into: output.left, frameCount: n, gain: leftGain)
            MixKernels.copy(r, into: output.right, frameCount: n, gain: rightGain)
        } catch {
            self.error = error
            output.clear(frameCount: n)
        }
    }

    private func renderTrackBuffer(timelineFrame: Int64, frameCount n: Int, transport: TransportInfo) throws {
        buffers.clear(frameCount: n)
        try source.add(blockStart: timelineFrame, frameCount: n, into: buffers.channels)
        if let chain {
            var count = 0
            if let playlist {
                count = playlist.collect(from: timelineFrame, to: timelineFrame + Int64(n), base: 0, speed: 1, into: midi,
                                         count: 0, capacity: midiCapacity, held: held)
            }
            var context = RenderContext(inPlace: buffers.channels, frameCount: n,
                                        midiEvents: UnsafeBufferPointer(start: midi, count: count), transport: transport)
            chain.process(&context)
        }
    }

    /// Renders the block at timeline `blockStart` into the track's buffers only (before the
    /// fader, see ``preFader``): what a freeze writes.
    func renderPreFader(blockStart: Int64, frameCount n: Int, transport: TransportInfo) throws {
        try renderTrackBuffer(timelineFrame: blockStart + latencyFrames, frameCount: n, transport: transport.advanced(by: Int(latencyFrames)))
    }
}
