import CALSA
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// One open ALSA PCM stream (capture or playback), negotiated and ready to move float periods.
///
/// Opened and configured on the control thread; ``readPeriod(into:frameCount:)`` and
/// ``writePeriod(from:frameCount:)`` run on the audio thread.
final class ALSAStream: @unchecked Sendable {
    let name: String
    let isCapture: Bool
    let pcm: OpaquePointer
    let format: DeviceSampleFormat
    let channelCount: Int
    let sampleRate: Int
    let periodFrames: Int
    let periodCount: Int
    let bufferFrames: Int
    /// Whether a clock paces the stream. A stream with ALSA's null PCM behind it (a file tap,
    /// a test device) has none: it moves as fast as it is asked.
    let isPaced: Bool
    /// Whether the stream's timestamps are the hardware's own (a `hw` PCM at the end of a
    /// chain of plugins that pass its timestamp on): then ``periodBegan()`` is exact.
    /// Plugins that stamp the moment they are asked (a JACK or other I/O plugin, the null
    /// PCM) or convert the pointer (rate, dmix and friends) give readings no finer than
    /// their own steps.
    let hasHardwareTimestamps: Bool
    /// Kept alive while the PCM is open: ALSA reads it lazily.
    private let config: ALSAConfig?
    private let raw: UnsafeMutableRawPointer
    private var closed = false

    /// Opens `request.name` for one direction and negotiates rate, format, channels and
    /// period. Control thread.
    init(request: DeviceRequest, capture: Bool, config: ALSAConfig?) throws(DeviceError) {
        name = request.name
        isCapture = capture
        self.config = config
        let stream = capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        let direction = capture ? "capture" : "playback"
        var handle: OpaquePointer?
        var code: Int32
        if let config {
            code = snd_pcm_open_lconf(&handle, request.name, stream, 0, config.handle)
        } else {
            code = snd_pcm_open(&handle, request.name, stream, 0)
        }
        guard code >= 0, let pcm = handle else { throw DeviceError.alsa(request.name, "cannot open for \(direction)", code) }
        self.pcm = pcm
        var hw: OpaquePointer?
        snd_pcm_hw_params_malloc(&hw)
        guard let params = hw else {
            snd_pcm_close(pcm)
            throw DeviceError(device: request.name, reason: "out of memory")
        }
        defer { snd_pcm_hw_params_free(params) }
        func fail(_ what: String, _ c: Int32) -> DeviceError {
            snd_pcm_close(pcm)
            return DeviceError.alsa(request.name, "\(direction): \(what)", c)
        }
        code = snd_pcm_hw_params_any(pcm, params)
        if code < 0 { throw fail("no usable configuration", code) }
        code = snd_pcm_hw_params_set_access(pcm, params, SND_PCM_ACCESS_RW_INTERLEAVED)
        if code < 0 { throw fail("interleaved access not supported", code) }

        var chosen: DeviceSampleFormat?
        for f in request.formats where snd_pcm_hw_params_test_format(pcm, params, ALSAStream.alsaFormat(f)) == 0 {
            chosen = f
            break
        }
        guard let format = chosen else {
            snd_pcm_close(pcm)
            throw DeviceError(device: request.name, reason: "\(direction): none of the sample formats \(request.formats.map(\.rawValue).joined(separator: ", ")) is supported")
        }
        code = snd_pcm_hw_params_set_format(pcm, params, ALSAStream.alsaFormat(format))
        if code < 0 { throw fail("cannot set format \(format.rawValue)", code) }
        self.format = format

        let wantedChannels = capture ? request.captureChannels : request.playbackChannels
        var minCh: UInt32 = 0, maxCh: UInt32 = 0
        snd_pcm_hw_params_get_channels_min(params, &minCh)
        snd_pcm_hw_params_get_channels_max(params, &maxCh)
        var channels = UInt32(max(wantedChannels, 1))
        if !capture && channels < minCh { channels = minCh }  // playback may open wider and leave extra channels silent
        if capture && channels < minCh { channels = minCh }   // capture may open wider; the engine picks channels
        if channels > maxCh {
            snd_pcm_close(pcm)
            throw DeviceError(device: request.name, reason: "\(direction): \(wantedChannels) channels requested, the device has \(minCh == maxCh ? "\(maxCh)" : "\(minCh)…\(maxCh)")", code: -EINVAL)
        }
        code = snd_pcm_hw_params_set_channels(pcm, params, channels)
        if code < 0 { throw fail("cannot use \(channels) channels", code) }
        channelCount = Int(channels)

        var rate = UInt32(request.sampleRate)
        var dir: Int32 = 0
        if request.exactRate {
            code = snd_pcm_hw_params_set_rate(pcm, params, rate, 0)
            if code < 0 {
                var lo: UInt32 = 0, hi: UInt32 = 0
                snd_pcm_hw_params_get_rate_min(params, &lo, &dir)
                snd_pcm_hw_params_get_rate_max(params, &hi, &dir)
                snd_pcm_close(pcm)
                throw DeviceError(device: request.name, reason: "\(direction): \(request.sampleRate) Hz is not supported (the device offers \(lo == hi ? "\(lo)" : "\(lo)…\(hi)") Hz)", code: code)
            }
        } else {
            code = snd_pcm_hw_params_set_rate_near(pcm, params, &rate, &dir)
            if code < 0 { throw fail("cannot set a sample rate near \(request.sampleRate) Hz", code) }
        }
        sampleRate = Int(rate)

        var period = snd_pcm_uframes_t(max(request.periodFrames, 16))
        dir = 0
        code = snd_pcm_hw_params_set_period_size_near(pcm, params, &period, &dir)
        if code < 0 { throw fail("cannot set period size \(request.periodFrames)", code) }
        var periods = UInt32(max(request.periodCount, 2))
        dir = 0
        code = snd_pcm_hw_params_set_periods_near(pcm, params, &periods, &dir)
        if code < 0 { throw fail("cannot set \(request.periodCount) periods", code) }
        code = snd_pcm_hw_params(pcm, params)
        if code < 0 { throw fail("the device refused the configuration", code) }
        snd_pcm_hw_params_get_period_size(params, &period, &dir)
        var buffer: snd_pcm_uframes_t = 0
        snd_pcm_hw_params_get_buffer_size(params, &buffer)
        periodFrames = Int(period)
        bufferFrames = Int(buffer)
        periodCount = max(1, Int(buffer) / max(Int(period), 1))

        var sw: OpaquePointer?
        snd_pcm_sw_params_malloc(&sw)
        if let swp = sw {
            snd_pcm_sw_params_current(pcm, swp)
            // Start explicitly (both streams together), never on the first read or write.
            var boundary: snd_pcm_uframes_t = 0
            snd_pcm_sw_params_get_boundary(swp, &boundary)
            snd_pcm_sw_params_set_start_threshold(pcm, swp, boundary)
            snd_pcm_sw_params_set_avail_min(pcm, swp, period)
            // A CLOCK_MONOTONIC stamp with every pointer update: MIDI is stamped with that clock.
            snd_pcm_sw_params_set_tstamp_mode(pcm, swp, SND_PCM_TSTAMP_ENABLE)
            snd_pcm_sw_params_set_tstamp_type(pcm, swp, SND_PCM_TSTAMP_TYPE_MONOTONIC)
            snd_pcm_sw_params(pcm, swp)
            snd_pcm_sw_params_free(swp)
        }
        let chain = ALSAStream.chainDescription(pcm)
        isPaced = snd_pcm_type(pcm) != SND_PCM_TYPE_NULL && !chain.contains("Null PCM")
        hasHardwareTimestamps = snd_pcm_type(pcm) == SND_PCM_TYPE_HW
            || (chain.contains("Hardware PCM card") && !ALSAStream.plugsWithTheirOwnTimes.contains { chain.contains($0) })
        raw = .allocate(byteCount: max(periodFrames, request.periodFrames, 4096) * channelCount * 4, alignment: 16)
        code = snd_pcm_prepare(pcm)
        if code < 0 {
            raw.deallocate()
            throw fail("cannot prepare", code)
        }
    }

    deinit {
        close()
        raw.deallocate()
    }

    /// Closes the PCM. Control thread.
    func close() {
        if closed { return }
        closed = true
        snd_pcm_close(pcm)
    }

    /// Frames the raw buffer holds per call.
    var maxFramesPerCall: Int { max(periodFrames, 4096) }

    /// How long a read or write may wait for the device before it counts as gone: two
    /// seconds, or ten buffers when those are longer. A device whose server or driver died
    /// (a JACK server killed, a USB cable pulled on some drivers) can otherwise block a
    /// read forever, and with it the take's closing.
    var stallTimeoutMilliseconds: Int32 { Int32(max(2000, 10 * bufferFrames * 1000 / max(sampleRate, 1))) }

    /// Waits until the device can move frames; -ETIMEDOUT when it stays silent too long.
    ///
    /// Audio thread: no allocation, no locks (poll on the PCM's descriptors).
    @inline(__always)
    func waitReady() -> Int32 {
        let r = snd_pcm_wait(pcm, stallTimeoutMilliseconds)
        if r == 0 { return -ETIMEDOUT }
        return r < 0 ? Int32(r) : 0
    }

    /// Reads `frameCount` frames; returns 0 or a negative ALSA code (-EPIPE for an overrun).
    ///
    /// Audio thread: no allocation, no locks, no logging.
    func readPeriod(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int32 {
        var done = 0
        while done < frameCount {
            let want = min(frameCount - done, maxFramesPerCall)
            let ready = waitReady()
            if ready == -ETIMEDOUT { return ready }
            let n = snd_pcm_readi(pcm, raw, snd_pcm_uframes_t(want))
            if n < 0 {
                if Int32(n) == -EINTR || Int32(n) == -EAGAIN { continue }
                return Int32(n)
            }
            SampleConversion.toFloat(raw, format: format, channelCount: channelCount, frameCount: Int(n),
                                     into: channels, frameOffset: done)
            done += Int(n)
        }
        return 0
    }

    /// Writes `frameCount` frames; returns 0 or a negative ALSA code (-EPIPE for an underrun).
    ///
    /// Audio thread: no allocation, no locks, no logging.
    func writePeriod(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> Int32 {
        var done = 0
        while done < frameCount {
            let want = min(frameCount - done, maxFramesPerCall)
            SampleConversion.fromFloat(channels, frameOffset: done, format: format, channelCount: channelCount,
                                       frameCount: want, into: raw)
            var offset = 0
            while offset < want {
                let ready = waitReady()
                if ready == -ETIMEDOUT { return ready }
                let n = snd_pcm_writei(pcm, raw + offset * channelCount * format.bytesPerSample, snd_pcm_uframes_t(want - offset))
                if n < 0 {
                    if Int32(n) == -EINTR || Int32(n) == -EAGAIN { continue }
                    return Int32(n)
                }
                offset += Int(n)
            }
            done += want
        }
        return 0
    }

    /// Writes `frameCount` frames of silence (the playback prefill). Control or audio thread.
    func writeSilence(frameCount: Int) -> Int32 {
        var left = frameCount
        let per = maxFramesPerCall
        memset(raw, 0, per * channelCount * format.bytesPerSample)
        while left > 0 {
            let n = snd_pcm_writei(pcm, raw, snd_pcm_uframes_t(min(left, per)))
            if n < 0 {
                if Int32(n) == -EINTR || Int32(n) == -EAGAIN { continue }
                return Int32(n)
            }
            left -= Int(n)
        }
        return 0
    }

    /// What the chain behind `pcm` is made of: its own dump, which names every plugin it goes
    /// through ("" when it cannot be had). Control thread.
    static func chainDescription(_ pcm: OpaquePointer) -> String {
        var output: OpaquePointer?
        guard snd_output_buffer_open(&output) == 0, let output else { return "" }
        defer { snd_output_close(output) }
        snd_pcm_dump(pcm, output)
        var text: UnsafeMutablePointer<CChar>?
        let length = snd_output_buffer_string(output, &text)
        guard length > 0, let text else { return "" }
        return String(cString: text)
    }

    /// Plugins (as their dumps name them) whose `snd_pcm_htimestamp` is not the hardware's
    /// stamp of its pointer: they stamp the moment they are asked, against a pointer of
    /// their own (alsa-lib 1.2: ioplug, extplug, null, share, shm, multi), or convert it.
    static let plugsWithTheirOwnTimes = ["IO-PCM Plugin", "External PCM Plugin", "Null PCM", "Rate conversion PCM",
                                         "Direct Stream Mixing", "Direct Snoop", "Direct Share", "Share PCM", "Shm PCM",
                                         "Multi PCM"]

    /// When the period just read (capture) or about to be written (playback) began on the
    /// device's clock: the time of the last pointer update less the frames that were ready
    /// beyond it then (`snd_pcm_htimestamp`, CLOCK_MONOTONIC). After a blocking read the
    /// frames captured since the period was complete, before a write the room freed since
    /// the last write filled the buffer: either way, how late the thread is. Nil when ALSA
    /// cannot say (the stream stopped, an xrun).
    ///
    /// Audio thread: no allocation; alsa-lib's lock on the PCM, which only this thread
    /// takes while it runs (its reads and writes take it too).
    func periodBegan() -> DevicePeriodTime? {
        var avail: snd_pcm_uframes_t = 0
        var stamp = timespec()
        guard snd_pcm_htimestamp(pcm, &avail, &stamp) == 0, stamp.tv_sec > 0 || stamp.tv_nsec > 0,
              Int(avail) <= bufferFrames else { return nil }
        let stampNanoseconds = Int64(stamp.tv_sec) * 1_000_000_000 + Int64(stamp.tv_nsec)
        let readyNanoseconds = Int64(avail) * 1_000_000_000 / Int64(max(sampleRate, 1))
        return DevicePeriodTime(beganNanoseconds: stampNanoseconds - readyNanoseconds, isExact: hasHardwareTimestamps)
    }

    static func alsaFormat(_ f: DeviceSampleFormat) -> snd_pcm_format_t {
        switch f {
        case .float32: SND_PCM_FORMAT_FLOAT_LE
        case .s32: SND_PCM_FORMAT_S32_LE
        case .s24: SND_PCM_FORMAT_S24_LE
        case .s24Packed: SND_PCM_FORMAT_S24_3LE
        case .s16: SND_PCM_FORMAT_S16_LE
        }
    }
}
