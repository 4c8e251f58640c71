import CALSA
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// Checks, every period, that an unlinked capture and playback pair still keeps the round
/// trip it started with, from the PCMs' own delays: the frames captured and not yet read, plus
/// the frames queued for playback, plus the period read and not yet written, is the playback
/// buffer the streams were started with (``ALSADuplexDevice``'s latency model).
///
/// Why: streams that are not linked can slip against each other with no xrun at all. ALSA's
/// JACK plugin runs capture and playback as two JACK clients; when the server skips one of
/// them for a cycle (its own xrun, a server stopped 30 ms), that stream's pointer stops one
/// server period while the other's moves, and every frame after lands a server period early or
/// late (measured: 256 frames either way at 512 × 3 and 128 × 4 on a 256-frame server, in
/// `make test-edges`, with no xrun ALSA reported). A slip seen is mended where the streams
/// stand (``ALSADuplexDevice``: the input a skipped capture lost is told as an xrun's, a
/// skipped playback's extra queue taken back), or by restarting both as after an xrun.
///
/// Only devices whose sum holds to the frame over the first periods after a start are watched:
/// hardware whose two streams interrupt apart wanders by up to a period and is left alone
/// (a slip there cannot be told from its jitter).
///
/// Audio thread, once made: arithmetic, `snd_pcm_delay`, and a bounded wait on the device.
final class RoundTripWatch: @unchecked Sendable {
    /// Periods after a start over which the sum must hold exactly for the pair to be watched.
    static let settlePeriods = 8

    /// The playback buffer prefilled at the start: what the sum must be.
    let bufferFrames: Int64
    /// How long a sum that is off may take to come back (a cycle seen half-way, one client's
    /// part of it done and the other's not): one period.
    let settleNanoseconds: Int64
    private var checks = 0
    private var exactSoFar = true
    /// Whether this start's streams are watched (they held to the frame while settling).
    private(set) var watching = false
    /// The last slip's size in frames (sum less buffer: negative when playback ran ahead).
    private(set) var lastSlipFrames: Int64 = 0

    /// A watch of a pair started with `bufferFrames` of playback prefill. Control thread.
    init(bufferFrames: Int, periodFrames: Int, sampleRate: Int) {
        self.bufferFrames = Int64(bufferFrames)
        settleNanoseconds = Int64(periodFrames) * 1_000_000_000 / Int64(max(sampleRate, 1))
    }

    /// The streams started again: settle afresh. Audio or control thread, not both.
    func reset() {
        checks = 0
        exactSoFar = true
        watching = false
    }

    /// Whether the round trip holds just after a read of `pendingFrames` not yet written.
    /// False when it moved and stayed moved for a period (``lastSlipFrames`` says how far):
    /// the caller mends it.
    ///
    /// Audio thread: no allocation, no locks; waits on the device at most one period, and
    /// only when the sum is off.
    func holds(capture: OpaquePointer, playback: OpaquePointer, pendingFrames: Int) -> Bool {
        guard var off = offset(capture: capture, playback: playback, pendingFrames: pendingFrames) else { return true }
        if checks < RoundTripWatch.settlePeriods {
            checks += 1
            if off != 0 { exactSoFar = false }
            if checks == RoundTripWatch.settlePeriods { watching = exactSoFar }
            return true
        }
        guard watching, off != 0 else { return true }
        // Off: maybe a cycle caught half-way (one stream's part done, the other's about to
        // be). Give it a period to come back before calling it a slip.
        let deadline = monotonicNanoseconds() + settleNanoseconds
        var pause = timespec(tv_sec: 0, tv_nsec: 100_000)
        while monotonicNanoseconds() < deadline {
            nanosleep(&pause, nil)
            guard let now = offset(capture: capture, playback: playback, pendingFrames: pendingFrames) else { return true }
            if now == 0 { return true }
            off = now
        }
        lastSlipFrames = off
        return false
    }

    /// Captured-unread + queued + pending, less the buffer; nil when a PCM cannot say (an
    /// xrun the next read or write finds).
    ///
    /// Audio thread: no allocation.
    private func offset(capture: OpaquePointer, playback: OpaquePointer, pendingFrames: Int) -> Int64? {
        var captured: snd_pcm_sframes_t = 0
        var queued: snd_pcm_sframes_t = 0
        guard snd_pcm_delay(capture, &captured) == 0, snd_pcm_delay(playback, &queued) == 0 else { return nil }
        return Int64(captured) + Int64(queued) + Int64(pendingFrames) - bufferFrames
    }
}
