/// Gains that move to new values over a fixed stretch of frames, whatever the block size: a
/// fader, pan or send level turned while playing glides over ``lengthFrames`` frames — the same
/// at a 32-frame period, a 1024-frame one and in a freewheeling export — where gliding over
/// one block made the smoothing (and so the sound of a move) depend on the buffer size.
///
/// Up to four gains glide together (a strip's fader and its two pan gains; a send's two), so
/// one block has one gliding stretch, then holds.
struct GainGlide {
    /// Frames a change takes (5.3 ms at 48 kHz): long enough that no step clicks, short enough
    /// to follow a hand on a fader.
    static let lengthFrames = 256

    /// Where the gains are (NaN before the first ``aim(_:)``).
    private(set) var current = SIMD4<Float>(repeating: .nan)
    /// Where they are going.
    private(set) var target = SIMD4<Float>(repeating: 0)
    private var step = SIMD4<Float>(repeating: 0)
    /// Frames of the glide still to go.
    private(set) var remainingFrames = 0

    /// Aims at `gains`: the first aim starts there (no glide in from nothing); a change glides
    /// from where the gains are now.
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    mutating func aim(_ gains: SIMD4<Float>) {
        if current.x.isNaN {
            current = gains
            target = gains
            remainingFrames = 0
            return
        }
        guard gains != target else { return }
        target = gains
        remainingFrames = GainGlide.lengthFrames
        step = (gains - current) / Float(GainGlide.lengthFrames)
    }

    /// Moves through a block of `frameCount` frames: the gains glide from `start` to `end`
    /// over the block's first `rampFrames` frames and hold `end` after (`rampFrames` is 0 when
    /// nothing moves).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    mutating func advance(frameCount: Int) -> (start: SIMD4<Float>, end: SIMD4<Float>, rampFrames: Int) {
        let start = current
        guard remainingFrames > 0, frameCount > 0 else { return (start, start, 0) }
        let k = min(frameCount, remainingFrames)
        remainingFrames -= k
        current = remainingFrames == 0 ? target : current + step * Float(k)
        return (start, current, k)
    }

    /// Stands at `gains` now, going nowhere (automation set them this block: a later change
    /// glides from there).
    ///
    /// Audio thread: arithmetic only.
    mutating func stand(at gains: SIMD4<Float>) {
        current = gains
        target = gains
        remainingFrames = 0
    }

    /// Jumps to where it was going (a locate: nothing is heard gliding from before it).
    ///
    /// Audio thread: arithmetic only.
    mutating func settle() {
        if !current.x.isNaN { current = target }
        remainingFrames = 0
    }
}
