import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// One strip as a surface sees it.
public struct OSCStrip: Equatable, Sendable {
    public var name: String
    public var gainDecibels: Double
    /// −1…+1.
    public var pan: Double
    public var mute: Bool
    public var solo: Bool
    /// nil for a bus (it has no input to arm).
    public var recordEnabled: Bool?
    /// Each send's level in dB, in order.
    public var sendDecibels: [Double]

    public init(name: String, gainDecibels: Double, pan: Double, mute: Bool, solo: Bool, recordEnabled: Bool?, sendDecibels: [Double]) {
        self.name = name
        self.gainDecibels = gainDecibels
        self.pan = pan
        self.mute = mute
        self.solo = solo
        self.recordEnabled = recordEnabled
        self.sendDecibels = sendDecibels
    }
}

/// The transport as a surface sees it.
public struct OSCTransport: Equatable, Sendable {
    public var rolling: Bool
    public var recording: Bool
    public var loop: Bool
    public var frame: Int64
    public var sampleRate: Int

    public init(rolling: Bool, recording: Bool, loop: Bool, frame: Int64, sampleRate: Int) {
        self.rolling = rolling
        self.recording = recording
        self.loop = loop
        self.frame = frame
        self.sampleRate = sampleRate
    }
}

/// Feedback to the surfaces that registered (`/set_surface`, `/refresh`, `/strip/list`), in
/// Ardour's addresses: on registration every strip's name and state and the transport; then
/// only what changed. Meters and the playhead are sent at most ``updatesPerSecond`` times a
/// second per strip (a surface on Wi-Fi should not get a datagram per audio period), and only
/// when they moved. UI thread (or whichever one thread owns the server).
public final class OSCFeedback {
    /// The most meter (and playhead) updates a surface gets per strip per second.
    public static let updatesPerSecond = 20.0
    /// Surfaces kept; registering one more forgets the one heard from longest ago.
    public static let maximumSurfaces = 16
    /// Meters are quantised to this (dB) before being compared, so noise is not resent.
    static let meterStepDecibels = 0.1

    private struct Surface {
        var settings: OSCSurfaceSettings
        var registeredAt: Double
        var strips: [OSCStrip]?
        var transport: OSCTransport?
        var meters: [Double] = []
        var metersSentAt: [Double] = []
        var positionSentAt = -Double.infinity
    }

    let server: OSCServer
    private var surfaces: [OSCPeer: Surface] = [:]

    /// Feedback through `server`'s socket.
    public init(server: OSCServer) { self.server = server }

    /// The surfaces registered, by where their feedback goes.
    public var surfaceCount: Int { surfaces.count }

    /// `peer` wants feedback with `settings` (nil: keep what it had, or everything): its full
    /// state goes out at the next ``update(strips:meters:transport:now:)``.
    public func register(_ peer: OSCPeer, settings: OSCSurfaceSettings?, now: Double) {
        let old = surfaces.first { $0.key == peer || $0.key == peer.withPort($0.value.settings.replyPort) }
        let s = settings ?? old?.value.settings ?? OSCSurfaceSettings()
        if let old { surfaces[old.key] = nil }
        let target = s.replyPort == 0 ? peer : peer.withPort(s.replyPort)
        if surfaces[target] == nil && surfaces.count >= OSCFeedback.maximumSurfaces,
           let oldest = surfaces.min(by: { $0.value.registeredAt < $1.value.registeredAt }) {
            surfaces[oldest.key] = nil
        }
        surfaces[target] = Surface(settings: s, registeredAt: now)
    }

    /// Sends each surface what changed since it was last told. `meters` are each strip's peak
    /// in dBFS (−∞ for silence).
    public func update(strips: [OSCStrip], meters: [Double], transport: OSCTransport, now: Double) {
        for (peer, var surface) in surfaces {
            send(to: peer, &surface, strips: strips, meters: meters, transport: transport, now: now)
            surfaces[peer] = surface
        }
    }

    private func send(to peer: OSCPeer, _ s: inout Surface, strips: [OSCStrip], meters: [Double], transport: OSCTransport, now: Double) {
        let f = s.settings.feedback
        let before = s.strips ?? []
        let full = s.strips == nil
        func out(_ path: String, _ args: [OSCValue]) { server.send(OSCMessage(path, args), to: peer) }
        for (i, strip) in strips.enumerated() {
            let id = OSCValue.int(Int32(i + 1))
            let old = full || i >= before.count ? nil : before[i]
            if old?.name != strip.name { out("/strip/name", [id, .string(strip.name)]) }
            if f.contains(.buttons) {
                if old?.mute != strip.mute { out("/strip/mute", [id, .int(strip.mute ? 1 : 0)]) }
                if old?.solo != strip.solo { out("/strip/solo", [id, .int(strip.solo ? 1 : 0)]) }
                if let armed = strip.recordEnabled, old?.recordEnabled != armed { out("/strip/recenable", [id, .int(armed ? 1 : 0)]) }
            }
            if f.contains(.values) {
                if old?.gainDecibels != strip.gainDecibels {
                    if s.settings.sendsDecibels { out("/strip/gain", [id, .float(Float(max(OSCLaw.silentBelowDecibels, strip.gainDecibels)))]) }
                    if s.settings.sendsPosition { out("/strip/fader", [id, .float(Float(OSCLaw.position(decibels: strip.gainDecibels)))]) }
                }
                if old?.pan != strip.pan { out("/strip/pan_stereo_position", [id, .float(Float((strip.pan + 1) / 2))]) }
                for (k, level) in strip.sendDecibels.enumerated() where old == nil || k >= old!.sendDecibels.count || old!.sendDecibels[k] != level {
                    out("/strip/send/gain", [id, .int(Int32(k + 1)), .float(Float(max(OSCLaw.silentBelowDecibels, level)))])
                }
            }
        }
        // Strips gone since: their names cleared, as Ardour blanks strips past the session's.
        if before.count > strips.count {
            for i in strips.count..<before.count { out("/strip/name", [.int(Int32(i + 1)), .string(" ")]) }
        }
        s.strips = strips
        sendMeters(to: peer, &s, meters: meters, count: strips.count, now: now, full: full)
        sendTransport(to: peer, &s, transport, now: now, full: full)
    }

    private func sendMeters(to peer: OSCPeer, _ s: inout Surface, meters: [Double], count: Int, now: Double, full: Bool) {
        guard s.settings.feedback.contains(.meters) else { return }
        if s.meters.count != count {
            s.meters = Array(repeating: .nan, count: count)
            s.metersSentAt = Array(repeating: -Double.infinity, count: count)
        }
        let interval = 1 / OSCFeedback.updatesPerSecond
        for i in 0..<count {
            let raw = i < meters.count && meters[i].isFinite ? max(OSCLaw.silentBelowDecibels, meters[i]) : OSCLaw.silentBelowDecibels
            let level = (raw / OSCFeedback.meterStepDecibels).rounded() * OSCFeedback.meterStepDecibels
            guard level != s.meters[i], now - s.metersSentAt[i] >= interval else { continue }
            s.meters[i] = level
            s.metersSentAt[i] = now
            // Ardour sends dB in gain mode 0, else the fader position of the level.
            let value = s.settings.faderMode == 0 ? level : OSCLaw.position(decibels: level)
            server.send(OSCMessage("/strip/meter", [.int(Int32(i + 1)), .float(Float(value))]), to: peer)
        }
    }

    private func sendTransport(to peer: OSCPeer, _ s: inout Surface, _ t: OSCTransport, now: Double, full: Bool) {
        let old = full ? nil : s.transport
        func out(_ path: String, _ args: [OSCValue]) { server.send(OSCMessage(path, args), to: peer) }
        if old?.rolling != t.rolling {
            out("/transport_play", [.int(t.rolling ? 1 : 0)])
            out("/transport_stop", [.int(t.rolling ? 0 : 1)])
        }
        if old?.recording != t.recording { out("/rec_enable_toggle", [.int(t.recording ? 1 : 0)]) }
        if old?.loop != t.loop { out("/loop_toggle", [.int(t.loop ? 1 : 0)]) }
        if old?.frame != t.frame && (full || now - s.positionSentAt >= 1 / OSCFeedback.updatesPerSecond) {
            s.positionSentAt = now
            // Strings, as Ardour sends them: a frame count outgrows an OSC int.
            if s.settings.feedback.contains(.samples) { out("/position/samples", [.string(String(t.frame))]) }
            if s.settings.feedback.contains(.time) { out("/position/time", [.string(OSCFeedback.time(t.frame, t.sampleRate))]) }
        } else if let old {
            s.transport = OSCTransport(rolling: t.rolling, recording: t.recording, loop: t.loop, frame: old.frame, sampleRate: t.sampleRate)
            return
        }
        s.transport = t
    }

    /// `HH:MM:SS.mmm`, Ardour's `/position/time`.
    static func time(_ frame: Int64, _ rate: Int) -> String {
        let ms = rate > 0 ? frame * 1000 / Int64(rate) : 0
        let h = ms / 3_600_000, m = ms / 60_000 % 60, sec = ms / 1000 % 60, milli = ms % 1000
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return "\(two(h)):\(two(m)):\(two(sec)).\(milli < 10 ? "00" : milli < 100 ? "0" : "")\(milli)"
    }
}
