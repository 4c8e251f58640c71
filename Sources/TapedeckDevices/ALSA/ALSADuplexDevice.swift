import CALSA
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// The ALSA backend: a capture and/or a playback stream on one PCM name, started together
/// (linked with `snd_pcm_link` where the driver allows) so captured frames line up with
/// played frames to the frame.
///
/// Latency model: playback is prefilled with one buffer of silence before the start, so a
/// frame written in cycle k leaves the device `bufferFrames` after the capture frames read in
/// the same cycle arrived. The round trip is therefore `bufferFrames` plus whatever the
/// converters and hardware add, which ALSA does not report.
public final class ALSADuplexDevice: PeriodDevice, @unchecked Sendable {
    public private(set) var configuration: DeviceConfiguration
    /// The audio thread that moves this device's periods.
    public let driver = PeriodDriver()
    private let capture: ALSAStream?
    private let playback: ALSAStream?
    private let linked: Bool
    /// What xruns cost (see ``XrunClock``).
    private let xrunClock: XrunClock
    /// Whether unlinked streams still keep their round trip (nil: linked, or one stream).
    private let roundTrip: RoundTripWatch?
    /// A slip of the output mended at this cycle's read, to be counted at its write.
    private var outputSlipped = false
    /// ``DeviceConfiguration/isPaced``, kept apart so the audio thread does not copy the
    /// configuration (and retain its name) to read it.
    private let paced: Bool

    /// Opens `request.name` with the global config or `config`. Control thread.
    public init(request: DeviceRequest, config: ALSAConfig? = nil) throws(DeviceError) {
        guard request.captureChannels > 0 || request.playbackChannels > 0 else {
            throw DeviceError(device: request.name, reason: "neither capture nor playback was asked for")
        }
        var req = request
        let cap = request.captureChannels > 0 ? try ALSAStream(request: req, capture: true, config: config) : nil
        if let cap {
            // Playback must run at exactly what capture got, or the two drift apart.
            req.sampleRate = cap.sampleRate
            req.exactRate = true
            req.periodFrames = cap.periodFrames
            req.periodCount = cap.periodCount
        }
        let play = request.playbackChannels > 0 ? try ALSAStream(request: req, capture: false, config: config) : nil
        if let cap, let play, cap.periodFrames != play.periodFrames {
            throw DeviceError(device: request.name, reason: "capture and playback periods differ (\(cap.periodFrames) vs \(play.periodFrames) frames); pick another --period")
        }
        capture = cap
        playback = play
        var isLinked = false
        if let cap, let play { isLinked = snd_pcm_link(cap.pcm, play.pcm) == 0 }
        linked = isLinked
        let main = cap ?? play!
        configuration = DeviceConfiguration(
            name: request.name, sampleRate: main.sampleRate,
            captureChannels: cap?.channelCount ?? 0, playbackChannels: play?.channelCount ?? 0,
            periodFrames: main.periodFrames, periodCount: main.periodCount, bufferFrames: (play ?? main).bufferFrames,
            captureFormat: cap?.format, playbackFormat: play?.format,
            captureLatencyFrames: 0, playbackLatencyFrames: Int64(play?.bufferFrames ?? 0), linked: isLinked)
        configuration.isPaced = [cap, play].compactMap { $0 }.allSatisfy(\.isPaced)
        paced = configuration.isPaced
        xrunClock = XrunClock(sampleRate: main.sampleRate)
        // Linked streams start and stop as one in the driver: they cannot slip apart. An
        // unpaced device (a null or file PCM) has no round trip to keep.
        roundTrip = cap != nil && play != nil && !isLinked && configuration.isPaced
            ? RoundTripWatch(bufferFrames: play!.bufferFrames, periodFrames: main.periodFrames, sampleRate: main.sampleRate) : nil
    }

    /// ALSA's part of a take's placement: playback is prefilled with one buffer before both
    /// streams start together, so a frame written leaves that buffer after the input read
    /// beside it arrived; capture adds nothing the engine can see (a period is read as soon as
    /// it is in). Converters, USB and cables are the residual `calibrate` measures, the same at
    /// every period size (checked at 128 × 4 to 1024 × 2 through ALSA's JACK plugin).
    public var latency: DeviceLatency {
        let c = configuration
        return DeviceLatency(backend: "ALSA", captureChannels: c.captureChannels, captureFrames: c.captureLatencyFrames,
                             playbackChannels: c.playbackChannels, playbackFrames: c.playbackLatencyFrames,
                             origin: "playback buffer \(c.periodCount) × \(c.periodFrames) frames")
    }

    /// Prefills playback and starts both streams together. Control thread.
    public func startStreams() throws(DeviceError) {
        for s in [capture, playback].compactMap({ $0 }) where snd_pcm_state(s.pcm) == SND_PCM_STATE_SETUP {
            // Stopped before: back to PREPARED so it can start again.
            let code = snd_pcm_prepare(s.pcm)
            if code < 0 { throw DeviceError.alsa(s.name, "cannot prepare", code) }
        }
        try startBothStreams()
        xrunClock.reset()
        roundTrip?.reset()
    }

    /// A cycle's period moved: when its first stream moved it (capture's read, else
    /// playback's write), as the restart after an xrun is timed.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func account(_ frameCount: Int) {
        xrunClock.moved(frameCount, atNanoseconds: monotonicNanoseconds())
    }

    private func startBothStreams() throws(DeviceError) {
        if let play = playback {
            let code = play.writeSilence(frameCount: play.bufferFrames)
            if code < 0 { throw DeviceError.alsa(play.name, "playback prefill failed", code) }
        }
        if linked, let cap = capture, snd_pcm_state(cap.pcm) != SND_PCM_STATE_RUNNING {
            let code = snd_pcm_start(cap.pcm)
            if code < 0 { throw DeviceError.alsa(cap.name, "cannot start", code) }
            return
        }
        for s in [capture, playback].compactMap({ $0 }) where snd_pcm_state(s.pcm) != SND_PCM_STATE_RUNNING {
            let code = snd_pcm_start(s.pcm)
            if code < 0 { throw DeviceError.alsa(s.name, "cannot start \(s.isCapture ? "capture" : "playback")", code) }
        }
    }

    /// Audio thread: no allocation, no locks, no logging, no throwing.
    public func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        guard let cap = capture else { return .ok }
        let code = cap.readPeriod(into: channels, frameCount: frameCount)
        if code == 0 {
            if let watch = roundTrip, let play = playback, !watch.holds(capture: cap.pcm, playback: play.pcm, pendingFrames: frameCount) {
                // The streams slipped apart (see ``RoundTripWatch``): everything after would
                // land a server period off.
                return mendSlip(watch.lastSlipFrames, playback: play, frameCount: frameCount)
            }
            // A capturing cycle moved once its period came in, as the restart after an xrun
            // is timed (see ``recover(_:movedFrames:)``).
            account(frameCount)
            return .ok
        }
        // The cycle does not render: its frames are part of what was lost.
        return recover(code, movedFrames: 0)
    }

    /// Audio thread: no allocation, no locks, no logging, no throwing.
    public func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        guard let play = playback else { return .ok }
        let code = play.writePeriod(from: channels, frameCount: frameCount)
        if code == 0 {
            if capture == nil { account(frameCount) }
            if outputSlipped {
                // Playback lost a server cycle (mended at the read): counted as an xrun; no
                // input was lost.
                outputSlipped = false
                return .xrun(lostFrames: 0)
            }
            return .ok
        }
        // The engine rendered this period and moved its playhead through it whether or not
        // the device took it: it counts as moved, not again as lost. (With capture, its read
        // counted it already.)
        return recover(code, movedFrames: capture == nil ? frameCount : 0)
    }

    /// Where the period about to render began on the card's clock: read off the capture
    /// stream when there is one (its read opened the cycle), else the playback stream.
    ///
    /// Audio thread: no allocation (see ``ALSAStream/periodBegan()``).
    public func periodTime(frameCount: Int) -> DevicePeriodTime? {
        guard paced else { return nil }
        return (capture ?? playback)?.periodBegan()
    }

    /// Restarts both streams after an xrun and works out how much device time went by unheard
    /// (see ``XrunClock``): `movedFrames` of the cycle went through the engine though the
    /// device refused them (a period rendered, then not taken).
    ///
    /// The restart is timed as every period is: when the restarted streams move their first
    /// frames, not when the restart was asked for — ALSA's JACK plugin, for one, moves at the
    /// next JACK cycle, up to a period later.
    ///
    /// Audio thread: no allocation, no locks, no logging (it waits on the device, at most
    /// until it moves or the stall timeout).
    private func recover(_ code: Int32, movedFrames: Int) -> DeviceIOResult {
        guard code == -EPIPE || code == -ESTRPIPE else { return .failed(code: code) }
        xrunClock.passed(movedFrames)
        for s in [capture, playback] {
            guard let s else { continue }
            var r = snd_pcm_recover(s.pcm, code, 1)
            if r < 0 { r = snd_pcm_prepare(s.pcm) }
            if r < 0 && DeviceError.isFatal(r) { return .failed(code: r) }
        }
        return restart()
    }

    /// Starts both streams again together (the round trip back to what it was at the
    /// start) and times the restart (see ``recover(_:movedFrames:)``).
    ///
    /// Audio thread: no allocation, no locks, no logging (it waits on the device, at most
    /// until it moves or the stall timeout).
    private func restart() -> DeviceIOResult {
        if capture != nil && playback != nil {
            // Restart both together so the round trip stays what it was.
            snd_pcm_drop(capture!.pcm)
            if !linked { snd_pcm_drop(playback!.pcm) }
            snd_pcm_prepare(capture!.pcm)
            snd_pcm_prepare(playback!.pcm)
        }
        do { try startBothStreams() } catch { return .failed(code: error.code == 0 ? -EBADFD : error.code) }
        roundTrip?.reset()
        outputSlipped = false
        // Unpaced devices run ahead of the clock: nothing measurable was lost there.
        guard xrunClock.isAnchored, paced, let first = capture ?? playback else { return .xrun(lostFrames: 0) }
        // The cycle's first stream moves its first frames: captured, or room made after the
        // prefill (a device that does not answer is found out by the read or write that
        // follows). As many as it says it has (a plugin may move several periods at once).
        _ = first.waitReady()
        let now = monotonicNanoseconds()
        let ready = Int(snd_pcm_avail_update(first.pcm))
        let moved = ready > 0 ? min(ready, first.bufferFrames) : configuration.periodFrames
        let lost = xrunClock.restarted(movedFrames: moved, atNanoseconds: now)
        return .xrun(lostFrames: lost)
    }

    /// Mends a slip of `off` frames (captured-unread + queued + pending, less the buffer)
    /// where the streams stand, with no restart, which would cost a buffer of input:
    ///
    /// - Negative: the server skipped the capture client for a cycle. Those `-off` frames of
    ///   input are lost (the period just read came after them and is dropped as well: it
    ///   cannot be placed before the engine knows); playback gets them as silence, so its
    ///   queue is back to the buffer, and the engine is told as of an xrun that lost them.
    /// - Positive: the server skipped the playback client: its queue is `off` frames longer.
    ///   The newest `off` frames written are taken back (`snd_pcm_rewind`), the output skips
    ///   them, the input lost nothing; counted as an xrun at this cycle's write.
    ///
    /// A PCM that cannot do either is restarted as after an xrun.
    ///
    /// Audio thread: no allocation, no locks.
    private func mendSlip(_ off: Int64, playback play: ALSAStream, frameCount: Int) -> DeviceIOResult {
        if off < 0 {
            let lost = Int(-off) + frameCount
            guard lost <= play.bufferFrames, play.writeSilence(frameCount: lost) == 0 else { return restart() }
            xrunClock.passed(lost)
            return .xrun(lostFrames: Int64(lost))
        }
        guard snd_pcm_rewind(play.pcm, snd_pcm_uframes_t(off)) == snd_pcm_sframes_t(off) else { return restart() }
        outputSlipped = true
        account(frameCount)
        return .ok
    }

    /// Stops both streams, dropping what is queued; the PCMs stay open (closed when the
    /// device is released), so the device can start again. Control thread.
    public func stopStreams() {
        for s in [capture, playback] {
            guard let s else { continue }
            snd_pcm_drop(s.pcm)
        }
    }

    deinit {
        driver.stop(device: self)
        if linked, let cap = capture { snd_pcm_unlink(cap.pcm) }
        capture?.close()
        playback?.close()
    }
}
