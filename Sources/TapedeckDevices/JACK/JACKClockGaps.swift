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

    /// One cycle: `deltaFrames` is how far JACK's clock (or its rolling transport) moved on
    /// since the last cycle beyond the frames that cycle had, negative when it gave some
    /// back; `periodFrames` is this cycle's length.
    ///
    /// `afterOverrun`: the last cycle itself ran longer than two periods, so JACK2 ran on
    /// without it and the gap is lost frames; only the one period a cycle that starts late
    /// can read ahead is held.
    mutating func cycle(deltaFrames delta: Int64, periodFrames: Int64, afterOverrun: Bool = false) -> Step {
        var step = Step()
        let owed = heldOld + heldNew + delta
        if owed <= 0 {
            heldOld = 0
            heldNew = 0
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
