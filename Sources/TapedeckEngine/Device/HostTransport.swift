import TapedeckCore

/// What a transport shared with other programs (JACK's) is doing at the first frame of one
/// cycle, as its device reads it.
public struct HostClockFrame: Sendable, Equatable, BitwiseCopyable {
    /// The shared transport's state.
    public enum State: Int, Sendable, BitwiseCopyable {
        /// Standing.
        case stopped = 0
        /// Asked to roll; waiting until every program that must get ready is (JACK's slow sync).
        case starting = 1
        /// Rolling.
        case rolling = 2
    }

    /// Standing, starting or rolling.
    public var state: State
    /// The shared transport's frame (JACK's frame, at the device's rate).
    public var frame: Int64
    /// Frames the rolling transport may have been read ahead by (JACK's readings of a late
    /// cycle can already be the next cycle's): held by the device until the next cycle says
    /// whether they were lost. A frame this far ahead of where the engine expects it is
    /// not a locate; the engine plays on from its own frame meanwhile.
    public var aheadFrames: Int64 = 0
    /// Whether another program publishes musical time (a timebase master); the fields below
    /// hold it then.
    public var hasMusicalTime = false
    /// Beats per minute.
    public var tempoBPM = 120.0
    /// Beats in a bar.
    public var beatsPerBar = 4
    /// Note value of a beat.
    public var beatUnit = 4
    /// Beats since the start at ``frame`` (0 = bar 1, beat 1).
    public var beatPosition = 0.0

    /// A frame with no musical time.
    public init(state: State, frame: Int64) {
        self.state = state
        self.frame = frame
    }
}

/// A device client that follows a shared transport: the engine. Every call comes on the
/// device's audio thread: no allocation, no locks, no logging.
public protocol HostClockClient: AnyObject {
    /// The shared transport at the start of this cycle (called after
    /// ``AudioDeviceClient/beginCycle()``, before the cycle renders). Returns whether the
    /// client could roll from `host.frame` at once — every disk stream holds data there —
    /// which JACK's slow-sync clients answer before the shared transport rolls — and whether
    /// to stop the shared transport.
    func followHost(_ host: HostClockFrame, frameCount: Int) -> HostFollowReply
}

/// What the engine answers the shared transport each cycle.
public struct HostFollowReply: Sendable, Equatable {
    /// The engine could roll from the shared transport's frame at once (its disk streams are
    /// filled there): JACK's slow sync may go on.
    public var readyToRoll: Bool
    /// The engine stopped by itself while the shared transport rolls on a start of its own:
    /// stop the shared transport too.
    public var stopHost: Bool
    /// A count-in running ahead of the shared transport is nearly where it joins: start the
    /// shared transport (it is already there, standing).
    public var startHost = false
}


/// A device whose server has a transport other programs share (JACK). When it asks to be
/// followed, the engine sends play, stop and locate to the shared transport instead of
/// applying them itself, and follows whatever the shared transport then does — its own
/// requests and other programs' alike — on the audio thread, in the cycle they happen.
public protocol HostTransportDevice: AudioDevice {
    /// Whether the engine follows and drives the shared transport. Fixed once opened.
    var followsHostTransport: Bool { get }
    /// Asks the shared transport to roll (it rolls once every slow-sync program is ready).
    /// Control thread; nothing once the device failed.
    func requestHostStart()
    /// Asks the shared transport to stop. Control thread.
    func requestHostStop()
    /// Asks the shared transport to move to `frame`. Control thread.
    func requestHostLocate(to frame: Int64)
    /// The tempo map Tapedeck publishes as bar, beat and tick when it is the timebase master.
    /// Control thread.
    func publishTempo(_ map: TempoMap)
    /// Frames in one of the server's cycles now (JACK's buffer size). Any thread.
    var hostCycleFrames: Int { get }
}
