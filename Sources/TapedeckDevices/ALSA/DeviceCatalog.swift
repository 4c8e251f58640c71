import CALSA
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// What one direction of a PCM offers, as ALSA reports it.
public struct StreamCapabilities: Sendable, Equatable {
    /// Fewest and most channels.
    public var channels: ClosedRange<Int>
    /// Lowest and highest rate in Hz.
    public var rates: ClosedRange<Int>
}

/// One PCM a user can name with `--device`.
public struct DeviceInfo: Sendable, Equatable {
    /// The name to pass to `--device`.
    public var name: String
    /// ALSA's description, if any (card and device names for hardware).
    public var description: String
    /// What capture offers (nil: cannot capture, or could not be probed).
    public var capture: StreamCapabilities?
    /// What playback offers.
    public var playback: StreamCapabilities?
    /// Why probing failed (busy, needs arguments, server not running), if it did.
    public var note: String?
}

/// Lists the PCMs that can capture or play: hardware cards and their devices (`hw:` and
/// `plughw:`), `default`, and every PCM an ALSA config names (`snd_device_name_hint`, or the
/// private config's `pcm` blocks). Control thread; may take a moment per device.
public enum DeviceCatalog {
    /// Every PCM found, probed for channels and rates.
    public static func list(config: ALSAConfig?) -> [DeviceInfo] {
        var entries: [(String, String)] = []
        func add(_ name: String, _ text: String) {
            if !entries.contains(where: { $0.0 == name }) { entries.append((name, text)) }
        }
        add("default", "the system's default device")
        for (name, text) in hardware() {
            add(name, text)
            add("plug" + name, text + " (with format, rate and channel conversion)")
        }
        if let config {
            for name in config.pcmNames { add(name, "defined in \(config.path)") }
        } else {
            for (name, text) in hints() { add(name, text) }
        }
        return entries.map { probe(name: $0.0, description: $0.1, config: config) }
    }

    /// `hw:C,D` for every card's PCM devices.
    static func hardware() -> [(String, String)] {
        var out: [(String, String)] = []
        var card: Int32 = -1
        while snd_card_next(&card) == 0 && card >= 0 {
            var ctl: OpaquePointer?
            guard snd_ctl_open(&ctl, "hw:\(card)", 0) == 0, let ctl else { continue }
            defer { snd_ctl_close(ctl) }
            var cardName: UnsafeMutablePointer<CChar>?
            snd_card_get_name(card, &cardName)
            let cardText = cardName.map { String(cString: $0) } ?? "card \(card)"
            free(cardName)
            var device: Int32 = -1
            while snd_ctl_pcm_next_device(ctl, &device) == 0 && device >= 0 {
                var info: OpaquePointer?
                snd_pcm_info_malloc(&info)
                guard let info else { continue }
                defer { snd_pcm_info_free(info) }
                snd_pcm_info_set_device(info, UInt32(device))
                snd_pcm_info_set_subdevice(info, 0)
                var name = ""
                for stream in [SND_PCM_STREAM_PLAYBACK, SND_PCM_STREAM_CAPTURE] {
                    snd_pcm_info_set_stream(info, stream)
                    if snd_ctl_pcm_info(ctl, info) == 0, let n = snd_pcm_info_get_name(info) { name = String(cString: n) }
                }
                out.append(("hw:\(card),\(device)", "\(cardText): \(name)"))
            }
        }
        return out
    }

    /// PCM names from the global configuration's hints.
    static func hints() -> [(String, String)] {
        var out: [(String, String)] = []
        var hints: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
        guard snd_device_name_hint(-1, "pcm", &hints) == 0, let list = hints else { return out }
        defer { snd_device_name_free_hint(list) }
        var i = 0
        while let hint = list[i] {
            i += 1
            guard let n = snd_device_name_get_hint(hint, "NAME") else { continue }
            let name = String(cString: n)
            free(n)
            var text = ""
            if let d = snd_device_name_get_hint(hint, "DESC") {
                text = String(cString: d).split(whereSeparator: \.isNewline).joined(separator: ", ")
                free(d)
            }
            if name != "null" { out.append((name, text)) }
        }
        return out
    }

    /// Opens `name` both ways without blocking and reads what hardware parameters allow.
    static func probe(name: String, description: String, config: ALSAConfig?) -> DeviceInfo {
        var info = DeviceInfo(name: name, description: description, capture: nil, playback: nil, note: nil)
        var notes: [String] = []
        for capture in [true, false] {
            var pcm: OpaquePointer?
            let stream = capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
            let code = config.map { snd_pcm_open_lconf(&pcm, name, stream, SND_PCM_NONBLOCK, $0.handle) }
                ?? snd_pcm_open(&pcm, name, stream, SND_PCM_NONBLOCK)
            guard code >= 0, let pcm else {
                notes.append("\(capture ? "capture" : "playback"): \(String(cString: snd_strerror(code)))")
                continue
            }
            defer { snd_pcm_close(pcm) }
            var hw: OpaquePointer?
            snd_pcm_hw_params_malloc(&hw)
            guard let hw else { continue }
            defer { snd_pcm_hw_params_free(hw) }
            guard snd_pcm_hw_params_any(pcm, hw) >= 0 else { continue }
            var cmin: UInt32 = 0, cmax: UInt32 = 0, rmin: UInt32 = 0, rmax: UInt32 = 0
            var dir: Int32 = 0
            snd_pcm_hw_params_get_channels_min(hw, &cmin)
            snd_pcm_hw_params_get_channels_max(hw, &cmax)
            snd_pcm_hw_params_get_rate_min(hw, &rmin, &dir)
            snd_pcm_hw_params_get_rate_max(hw, &rmax, &dir)
            let caps = StreamCapabilities(channels: Int(cmin)...Int(max(cmin, cmax)), rates: Int(rmin)...Int(max(rmin, rmax)))
            if capture { info.capture = caps } else { info.playback = caps }
        }
        if info.capture == nil && info.playback == nil { info.note = notes.joined(separator: "; ") }
        return info
    }
}
