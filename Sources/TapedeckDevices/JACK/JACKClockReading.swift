/// One cycle's reading of JACK's clock (`jack_last_frame_time`) and, while it rolls, of its
/// transport frame, turned into how far the device moved on between two cycles beyond the
/// frames the last one had (what ``JACKClockGaps`` weighs).
///
/// While the engine follows JACK's rolling transport, what the transport moved on is the
/// measure — a buffer-size change stops the clock but not the transport — so the playhead
/// stays on JACK's frame; as long as it moved on by no more than the clock (or not at all, or
/// back by what is held). More, or further back, is a locate, which the engine follows as one.
///
/// A late cycle can read the two from different server cycles. JACK2's server moves its
/// frame clock on at the top of a cycle (`JackDriver::CycleTakeBeginTime`) and its transport
/// only at the end of the engine's part of it (`JackTransportEngine::CycleEnd`), just before
/// it wakes the clients; a cycle that runs into the server's next one can read the transport
/// (read first) before that switch and the clock after it: the clock a period ahead of the
/// transport. The next reading then shows the transport moved on a period more than the
/// clock: it caught up with the clock, which is the clock's gap (held, given back or lost as
/// any other, see ``JACKClockGaps``), not a locate. Taken for one, the engine followed it,
/// ended the take there and said another program had moved JACK's transport (issue 39, seen in
/// CI under load; the cycle JACK woke again read the same frame and "moved" it back).
///
/// Audio thread: a value type, arithmetic only.
struct JACKClockReading {
    /// What one cycle's reading says.
    struct Step: Equatable {
        /// How far the device moved on beyond the last cycle's frames (negative: some given back).
        var deltaFrames: Int64 = 0
        /// The followed transport is seen rolling for the first time.
        var startsRolling = false
    }

    private var haveLast = false
    private var lastStart: UInt32 = 0
    private var lastFrames: Int64 = 0
    /// JACK's transport frame last cycle while it rolled (-1: it did not).
    private var lastTransportFrame: Int64 = -1
    /// How far the clock was read ahead of the rolling transport (0 up to a period: one
    /// server cycle's switch apart), which the transport may still catch up by.
    private(set) var clockLeadFrames: Int64 = 0

    /// One cycle: `clockFrame` is JACK's frame time at its start, `frames` its length,
    /// `transportFrame` JACK's transport frame when it rolls and is followed (nil otherwise),
    /// `heldFrames` what ``JACKClockGaps`` holds of earlier gaps (a reading may give it back).
    mutating func cycle(clockFrame start: UInt32, frames: Int64, transportFrame: Int64?, heldFrames: Int64,
                        sampleRate: Int) -> Step {
        var step = Step()
        var lead: Int64 = 0
        if haveLast {
            // Frame time wraps at 2^32; the signed difference of two readings does not.
            let gap = Int64(Int32(bitPattern: start &- lastStart)) - lastFrames
            if abs(gap) < Int64(sampleRate) * 60 {
                step.deltaFrames = gap
                if let now = transportFrame, lastTransportFrame >= 0 {
                    let moved = now - lastTransportFrame - lastFrames
                    if moved >= -heldFrames && moved <= max(gap, 0) + clockLeadFrames {
                        step.deltaFrames = moved
                        lead = min(max(gap + clockLeadFrames - moved, 0), frames)
                    }
                }
            }
        }
        step.startsRolling = haveLast && transportFrame != nil && lastTransportFrame < 0
        haveLast = true
        lastStart = start
        lastFrames = frames
        lastTransportFrame = transportFrame ?? -1
        clockLeadFrames = lead
        return step
    }
}
