/// What a node sees for one block: buffers, MIDI and the host's transport.
///
/// Everything in here is a view into storage the host allocated before the audio thread
/// started, so building one per block costs a few stores and no allocation.

/// The audio format a node is prepared for.
public struct NodeFormat: Equatable, Sendable {
    /// Frames per second.
    public var sampleRate: Double
    /// Number of non-interleaved channels (1 = mono, 2 = stereo).
    public var channelCount: Int
    /// Whether blocks are rendered against a clock (a device). False for offline rendering
    /// (export), where a node may do slow work inline rather than on a background thread, so
    /// that the result does not depend on timing (an LV2 plugin's worker runs synchronously).
    public var isRealtime: Bool

    /// Creates a format.
    public init(sampleRate: Double, channelCount: Int, isRealtime: Bool = true) {
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.isRealtime = isRealtime
    }
}

/// One MIDI channel-voice message placed inside a block.
public struct MIDIEvent: Equatable, Sendable {
    /// Frame inside the block where the event takes effect (0 ..< frameCount).
    public var frameOffset: Int32
    /// Status byte (message type in the high nibble, channel in the low nibble).
    public var status: UInt8
    /// First data byte (note number, controller number).
    public var data1: UInt8
    /// Second data byte (velocity, controller value).
    public var data2: UInt8

    /// Creates an event from raw bytes.
    public init(frameOffset: Int32, status: UInt8, data1: UInt8, data2: UInt8) {
        self.frameOffset = frameOffset
        self.status = status
        self.data1 = data1
        self.data2 = data2
    }

    /// A note-on on `channel` (0-based).
    public static func noteOn(note: UInt8, velocity: UInt8, frameOffset: Int32, channel: UInt8 = 0) -> MIDIEvent {
        MIDIEvent(frameOffset: frameOffset, status: 0x90 | (channel & 0x0F), data1: note, data2: velocity)
    }

    /// A note-off on `channel` (0-based).
    public static func noteOff(note: UInt8, frameOffset: Int32, channel: UInt8 = 0) -> MIDIEvent {
        MIDIEvent(frameOffset: frameOffset, status: 0x80 | (channel & 0x0F), data1: note, data2: 0)
    }

    /// True for a note-on with non-zero velocity (velocity 0 means note-off by MIDI convention).
    @inline(__always) public var isNoteOn: Bool { status & 0xF0 == 0x90 && data2 > 0 }
    /// True for a note-off, including note-on with velocity 0.
    @inline(__always) public var isNoteOff: Bool { status & 0xF0 == 0x80 || (status & 0xF0 == 0x90 && data2 == 0) }
    /// True for "all notes off" / "all sound off" controllers.
    @inline(__always) public var isAllNotesOff: Bool { status & 0xF0 == 0xB0 && (data1 == 123 || data1 == 120) }
}

/// The host's musical clock at the first frame of a block.
public struct TransportInfo: Equatable, Sendable {
    /// Beats per minute (a beat is one `beatUnit` note, as in ``TapedeckCore/TempoMap``).
    public var tempoBPM: Double
    /// Beats since the session start at the block's first frame (0 = bar 1, beat 1).
    public var beatPosition: Double
    /// Beats in one bar.
    public var beatsPerBar: Int
    /// Note value of one beat (4 = quarter, 8 = eighth).
    public var beatUnit: Int
    /// Frames per second.
    public var sampleRate: Double
    /// Timeline frame of the block's first frame.
    public var timelineFrame: Int64
    /// Whether the transport is rolling.
    public var isPlaying: Bool
    /// Whether the transport is recording.
    public var isRecording: Bool
    /// Whether the transport loops over a cycle range.
    public var isCycling: Bool
    /// Beats since the session start at the start of the bar the block starts in (NaN: every
    /// bar so far had ``beatsPerBar`` beats, so bars start at its multiples).
    public var barStartBeat = Double.nan
    /// How fast the tempo moves over the block, BPM a frame (0: it holds; on a ramp of the
    /// tempo map, the ramp's slope).
    public var bpmPerFrame = 0.0

    /// Creates transport info; defaults describe a stopped 120 BPM 4/4 transport at 48 kHz.
    public init(tempoBPM: Double = 120, beatPosition: Double = 0, beatsPerBar: Int = 4, beatUnit: Int = 4,
                sampleRate: Double = 48000, timelineFrame: Int64 = 0,
                isPlaying: Bool = false, isRecording: Bool = false, isCycling: Bool = false) {
        self.tempoBPM = tempoBPM
        self.beatPosition = beatPosition
        self.beatsPerBar = beatsPerBar
        self.beatUnit = beatUnit
        self.sampleRate = sampleRate
        self.timelineFrame = timelineFrame
        self.isPlaying = isPlaying
        self.isRecording = isRecording
        self.isCycling = isCycling
    }

    /// How many beats one frame lasts at this tempo.
    @inline(__always) public var beatsPerFrame: Double { tempoBPM / 60 / sampleRate }

    /// Milliseconds lasted by `wholeNotes` (1/8 = 0.125) at this tempo and beat unit.
    @inline(__always) public func milliseconds(wholeNotes: Double) -> Double {
        wholeNotes * Double(beatUnit) * 60_000 / max(tempoBPM, 1)
    }

    /// The transport info for the frame `frames` after this one, tempo unchanged.
    /// Audio thread: safe (pure arithmetic).
    public func advanced(by frames: Int) -> TransportInfo {
        var next = self
        if isPlaying || isRecording { next.beatPosition += Double(frames) * beatsPerFrame }
        next.timelineFrame += Int64(frames)
        return next
    }
}

/// The view of one block a node processes.
///
/// `input` and `output` hold one pointer per channel, each valid for `frameCount` frames.
/// They may point at the same storage (chains process in place), so a node must read a
/// frame's input before it writes that frame's output.
public struct RenderContext {
    /// Input channels, at least as many as `output` (generators and instruments mix into them,
    /// see ``NodeKind``).
    public var input: UnsafeBufferPointer<UnsafeMutablePointer<Float>>
    /// Output channels.
    public var output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>
    /// Frames in this block; never more than the `maxFrames` the node was prepared with.
    public var frameCount: Int
    /// The block's MIDI events, sorted by `frameOffset`.
    public var midiEvents: UnsafeBufferPointer<MIDIEvent>
    /// The host's clock at the block's first frame.
    public var transport: TransportInfo

    /// Creates a context; every pointer must stay valid while the node processes it.
    public init(input: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                output: UnsafeBufferPointer<UnsafeMutablePointer<Float>>,
                frameCount: Int,
                midiEvents: UnsafeBufferPointer<MIDIEvent> = UnsafeBufferPointer(start: nil, count: 0),
                transport: TransportInfo = TransportInfo()) {
        self.input = input
        self.output = output
        self.frameCount = frameCount
        self.midiEvents = midiEvents
        self.transport = transport
    }

    /// A context that processes `buffers` in place.
    public init(inPlace buffers: UnsafeBufferPointer<UnsafeMutablePointer<Float>>, frameCount: Int,
                midiEvents: UnsafeBufferPointer<MIDIEvent> = UnsafeBufferPointer(start: nil, count: 0),
                transport: TransportInfo = TransportInfo()) {
        self.init(input: buffers, output: buffers, frameCount: frameCount, midiEvents: midiEvents, transport: transport)
    }

    /// Channels a node should write: the smaller of the output's and `preparedChannels`.
    @inline(__always) public func channelCount(prepared preparedChannels: Int) -> Int {
        min(output.count, preparedChannels)
    }
}
