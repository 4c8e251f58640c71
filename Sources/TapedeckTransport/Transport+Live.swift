import TapedeckCore
import TapedeckIO

/// A take being recorded, as a front-end draws it while it grows: where its frames go on
/// the timeline and its waveform so far (written by the take's writer thread).
public struct LiveTake: Sendable {
    /// The track it records (0-based, in the session as the pass began).
    public var track: Int
    /// That track's name then.
    public var trackName: String
    /// The timeline frame of the take's first frame (a punch's start, the loop's start, the
    /// record point).
    public var startFrame: Int64
    /// Timeline frames per take frame: the transport's speed while it records (1, or another
    /// speed when practising slower), as the take will be placed.
    public var timelineFramesPerFrame: Double
    /// A loop recording's loop: the take's frames go round it, pass after pass, each pass
    /// ``passFrames`` frames of the take.
    public var loop: FrameRange?
    /// Take frames per loop pass (0 when not looping).
    public var passFrames: Int64
    /// The waveform so far.
    public var peaks: LivePeaks

    /// Creates a live take.
    public init(track: Int, trackName: String, startFrame: Int64, timelineFramesPerFrame: Double = 1, loop: FrameRange? = nil,
                passFrames: Int64 = 0, peaks: LivePeaks) {
        self.track = track
        self.trackName = trackName
        self.startFrame = startFrame
        self.timelineFramesPerFrame = timelineFramesPerFrame
        self.loop = loop
        self.passFrames = passFrames
        self.peaks = peaks
    }
}

extension Transport {
    /// The takes of the running pass once its record point is reached (none while counting
    /// in or pre-rolling), audio tracks only: cheap, no disk. Control thread.
    public func liveTakes() -> [LiveTake] {
        guard let pass, pass.set.hasStarted else { return [] }
        let start = pass.set.startFrame
        let speed = pass.speed.isFinite && pass.speed > 0 ? pass.speed : 1
        var loop: FrameRange?
        var passFrames: Int64 = 0
        if case .loop(let l) = pass.kind, l.frameCount > 0 {
            loop = l
            // As the takes are placed (TakeMarker's loop passes): a pass holds loop ÷ speed frames.
            passFrames = speed == 1 ? l.frameCount : max(1, Int64((Double(l.frameCount) / speed).rounded()))
        }
        return pass.takes.enumerated().compactMap { k, take in
            guard let peaks = pass.set.livePeaks(take: k) else { return nil }
            return LiveTake(track: take.track, trackName: take.trackName, startFrame: loop?.startFrame ?? start,
                            timelineFramesPerFrame: speed, loop: loop, passFrames: passFrames, peaks: peaks)
        }
    }
}
