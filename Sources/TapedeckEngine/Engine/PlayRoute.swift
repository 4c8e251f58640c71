import TapedeckCore

/// How the transport moves along the timeline: straight on, or round a loop — from anywhere
/// before the loop's end it runs to the end and wraps to the loop's start, forever.
///
/// The audio thread moves the playhead with it and the disk thread predicts, with the same
/// arithmetic, which timeline frames the playhead will need next; so both always agree.
public struct PlayRoute: Equatable, Sendable {
    /// First frame of the loop.
    public var loopStart: Int64
    /// First frame after the loop.
    public var loopEnd: Int64
    /// Whether the loop is on.
    public var loops: Bool

    /// Straight on, no loop.
    public static let straight = PlayRoute(loopStart: 0, loopEnd: 0, loops: false)

    /// A route; a loop with no length never wraps.
    public init(loopStart: Int64, loopEnd: Int64, loops: Bool) {
        self.loopStart = loopStart
        self.loopEnd = loopEnd
        self.loops = loops && loopEnd > loopStart
    }

    /// Routes that do not loop all move the same way, whatever range they keep.
    public static func == (a: PlayRoute, b: PlayRoute) -> Bool {
        a.loops == b.loops && (!a.loops || (a.loopStart == b.loopStart && a.loopEnd == b.loopEnd))
    }

    /// A route looping over `range` when `enabled`.
    public init(loop range: FrameRange?, enabled: Bool) {
        self.init(loopStart: range?.startFrame ?? 0, loopEnd: range?.endFrame ?? 0, loops: enabled && range != nil)
    }

    /// Frames from `frame` to the next wrap, or `Int64.max` when the route does not wrap from there.
    ///
    /// Audio and disk threads: arithmetic only.
    @inline(__always)
    public func framesUntilWrap(from frame: Int64) -> Int64 {
        loops && frame < loopEnd ? loopEnd - frame : .max
    }

    /// Frames from `frame` after which `a` and `b` take the playhead to different places
    /// (`Int64.max`: never).
    ///
    /// Audio thread: arithmetic only.
    public static func divergence(_ a: PlayRoute, _ b: PlayRoute, from frame: Int64) -> Int64 {
        let wa = a.framesUntilWrap(from: frame), wb = b.framesUntilWrap(from: frame)
        // Neither wraps, or both wrap at the same frame (the same loop end) to the same start.
        if wa == wb && (wa == .max || a.loopStart == b.loopStart) { return .max }
        return min(wa, wb)
    }

    /// Where `frame` is after `count` frames (count ≥ 0) along the route. Never traps: past
    /// `Int64.max` it stays at `Int64.max`.
    ///
    /// Audio and disk threads: arithmetic only.
    @inline(__always)
    public func advance(_ frame: Int64, by count: Int64) -> Int64 {
        let until = framesUntilWrap(from: frame)
        if count < until {
            let (sum, overflow) = frame.addingReportingOverflow(count)
            return overflow ? .max : sum
        }
        return loopStart + (count - until) % (loopEnd - loopStart)
    }
}
