/// What JACK's clock says was lost between two cycles, read so that a late cycle's reading is
/// not taken for lost frames.
///
/// A cycle that runs late can read JACK's clock and transport of the cycle after it (JACK2
/// switches them each period whether or not every client has finished), and the next cycle
/// reads them again: a gap that is given back. A cycle can be read that far ahead only while
/// JACK2 waits for a late client — two periods, after which the graph runs on without it and
/// the frames are lost to it — so of a fresh gap two periods are held for two cycles
/// (skipped then, as far as the clock did not give them back: a cycle late twice in a row
/// reads ahead twice, +256, 0, −256, seen in CI) and the rest is skipped at once; the xrun is
/// told once nothing of it is held. Measured on JACK2's dummy driver: under
/// load, a gap of one period followed by one of minus a period, and one of two followed by
/// one of minus one, with the source's samples unbroken; a 60 ms stall of the client, a gap of
/// 2560 frames and 2560 of the source's samples missed; a 16 ms stall, +512 then −256 and
/// 256 missed.
///
/// PipeWire's JACK (0.3.65) catches up after a stall by running the missed cycles back to
/// back, a few hundredths of a millisecond apart, and for the length of that burst a cycle's
/// clock can read a period (or two) ahead of the audio it hands over, given back only when the
/// burst ends: seen with `TAPEDECK_JACK_TRACE` (``JACKCycleTrace``) in 6 of 6 stalls of 200 ms,
/// bursts of 8 to 20 cycles with the audio a period behind the clock for 5 to 9 of them. Held
/// for two cycles only, such a gap was taken as lost before it was given back, and the audio
/// after it landed a period late. So while cycles come back to back (`backToBack`) nothing
/// owed is skipped: it is all held, until a cycle that starts on time (whose reading is
/// true) says what was lost, at most ``burstCycles`` cycles (a freewheeling server runs every
/// cycle back to back, and a hold must end). JACK2 does not run cycles in a burst: its late
/// reading is one cycle followed by its give-back, as before.
///
/// Audio thread: a value type, arithmetic only.
struct JACKClockGaps {
    /// What to do with one cycle's reading.
    struct Step: Equatable {
        /// Frames to skip before this cycle renders.
        var skipFrames: Int64 = 0
        /// An xrun is complete: tell it, with all it cost (`lostFrames`, `skipFrames` of it now).
        var tell = false
        var lostFrames: Int64 = 0
        /// A fresh gap was seen this cycle (one of the server's xrun reports is its).
        var freshGap = false
    }

    /// Frames of a gap not skipped yet: JACK's clock may still give them back.
    var heldFrames: Int64 { heldOld + heldNew }
    /// Held since the last cycle, and held for one cycle already (skipped at the next, unless
    /// given back: a cycle can run late two cycles in a row, reading ahead in both).
    private var heldNew: Int64 = 0
    private var heldOld: Int64 = 0
    private var open = false
    private var skipped: Int64 = 0
    /// Cycles held back to back so far (see ``burstCycles``).
    private var burst = 0
    /// The longest catch-up burst held whole: about a second at 256 frames.
    static let burstCycles = 192

    /// One cycle: `deltaFrames` is how far JACK's clock (or its rolling transport) moved on
    /// since the last cycle beyond the frames that cycle had, negative when it gave some
    /// back; `periodFrames` is this cycle's length.
    ///
    /// `afterOverrun`: the last cycle itself ran longer than two periods, so JACK2 ran on
    /// without it and the gap is lost frames; only the one period a cycle that starts late
    /// can read ahead is held.
    ///
    /// `backToBack`: this cycle began well within a period of the last one's start, as a
    /// server catching up runs them; what is owed is held whole (see above).
    mutating func cycle(deltaFrames delta: Int64, periodFrames: Int64, afterOverrun: Bool = false, backToBack: Bool = false) -> Step {
        var step = Step()
        let owed = heldOld + heldNew + delta
        burst = backToBack && owed > 0 ? burst + 1 : 0
        if owed <= 0 {
            heldOld = 0
            heldNew = 0
        } else if burst > 0 && burst <= Self.burstCycles {
            // A reading in a catch-up burst may be ahead of its audio: all of it waits for a
            // cycle on time. (Oldest and newest are one now: that cycle holds it one more.)
            heldOld = 0
            heldNew = owed
        } else {
            // Oldest first: what has stood two cycles is lost; what has stood one waits one more.
            let confirmed = min(heldOld, owed)
            let kept = min(heldNew, owed - confirmed)
            let fresh = owed - confirmed - kept
            let hold = min(fresh, (afterOverrun ? 1 : 2) * periodFrames)
            step.skipFrames = confirmed + fresh - hold
            heldOld = kept
            heldNew = hold
        }
        if delta > 0 && !open {
            open = true
            step.freshGap = true
        }
        skipped += step.skipFrames
        if open && heldFrames == 0 {
            open = false
            step.tell = true
            step.lostFrames = skipped
            skipped = 0
        }
        return step
    }

    /// Everything held is lost, now: the reading that could give it back is gone (the
    /// transport it was measured against started rolling since). The xrun is told if this
    /// was the last of it.
    mutating func settle() -> Step {
        var step = Step()
        step.skipFrames = heldOld + heldNew
        heldOld = 0
        heldNew = 0
        skipped += step.skipFrames
        if open {
            open = false
            step.tell = true
            step.lostFrames = skipped
            skipped = 0
        }
        return step
    }
}
