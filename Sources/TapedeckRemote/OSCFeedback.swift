import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// Feedback to the surfaces that registered (`/set_surface`, `/refresh`), in Ardour's
/// addresses, types and values (`osc_route_observer.cc`, `osc_global_observer.cc`,
/// `osc_select_observer.cc`).
///
/// Each surface is sent what it asked for (its feedback bits) as one state: every message it
/// should show now, each under its own address (and strip). Once a frame of the surface's
/// rate (``framesPerSecond``), each message that differs from the one last sent under its
/// address goes out; the rest do not. So a change and its undoing within a frame send
/// nothing (play, stop, play within 40 ms never flickers), and the last value of anything is
/// always sent at the next frame (a change is never lost). UI thread (or whichever one
/// thread owns the server).
public final class OSCFeedback {
    /// Frames a second: the most updates of one address a surface gets a second (a surface
    /// on Wi-Fi should not get a datagram per audio period).
    public static let framesPerSecond = 20.0
    /// Surfaces kept; registering one more forgets the one heard from longest ago.
    public static let maximumSurfaces = 16
    /// Meters are quantised to this (dB) before being compared, so noise is not resent.
    static let meterStepDecibels = 0.1

    /// One registered surface: what it asked for, where its bank is, and what it was sent.
    struct Surface {
        var settings: OSCSurfaceSettings
        var registeredAt: Double
        /// The bank's first strip, 1-based among the surface's strips.
        var bank = 1
        /// The strip it selected (a track index), for `/select/…`.
        var selected: Int?
        /// The node of the selected strip's playback chain its plugin page shows (1-based).
        var plugin = 1
        /// The plugin page's first parameter (1-based; Ardour's `plug_page`).
        var pluginPage = 1
        /// Plugin parameter slots shown so far (cleared when a node with fewer comes).
        var pluginParametersShown = 0
        /// The last message sent under each address (and strip).
        var sent: [String: OSCMessage] = [:]
        /// Strip slots shown so far (with no banks, strips removed since are cleared).
        var slotsShown = 0
        var frameSentAt = -Double.infinity
        /// An update came within a frame of the last one: the next frame must still go out
        /// (what changed meanwhile is sent then), even if nothing else wakes the owner.
        var pending = false
    }

    let server: OSCServer
    private(set) var surfaces: [OSCPeer: Surface] = [:]

    /// Feedback through `server`'s socket.
    public init(server: OSCServer) { self.server = server }

    /// The surfaces registered, by where their feedback goes.
    public var surfaceCount: Int { surfaces.count }

    /// `peer` wants feedback with `settings` (nil: keep what it had, or everything): its full
    /// state goes out at the next ``update(_:wind:now:)``, its bank back at the first strip.
    public func register(_ peer: OSCPeer, settings: OSCSurfaceSettings?, now: Double) {
        let old = key(of: peer)
        let s = settings ?? old.flatMap { surfaces[$0]?.settings } ?? OSCSurfaceSettings()
        let selected = old.flatMap { surfaces[$0]?.selected }
        let plugin = old.flatMap { surfaces[$0]?.plugin } ?? 1
        let pluginPage = old.flatMap { surfaces[$0]?.pluginPage } ?? 1
        if let old { surfaces[old] = nil }
        let target = s.replyPort == 0 ? peer : peer.withPort(s.replyPort)
        if surfaces[target] == nil && surfaces.count >= OSCFeedback.maximumSurfaces,
           let oldest = surfaces.min(by: { $0.value.registeredAt < $1.value.registeredAt }) {
            surfaces[oldest.key] = nil
        }
        surfaces[target] = Surface(settings: s, registeredAt: now, selected: selected, plugin: plugin, pluginPage: pluginPage)
    }

    /// Where the surface that sent from `peer` gets its feedback (nil: not registered).
    func key(of peer: OSCPeer) -> OSCPeer? {
        surfaces.first { $0.key == peer || $0.key == peer.withPort($0.value.settings.replyPort) }?.key
    }

    /// The settings, bank and selection of the surface that sent from `peer` (an unregistered
    /// one has Ardour's defaults: no banks).
    func surface(of peer: OSCPeer) -> Surface {
        key(of: peer).flatMap { surfaces[$0] } ?? Surface(settings: OSCSurfaceSettings(), registeredAt: 0)
    }

    /// Changes the bank or selection of the surface that sent from `peer` (one not registered
    /// yet is registered with the defaults, as Ardour keeps a surface for any sender); its
    /// next frame comes at once.
    func change(_ peer: OSCPeer, now: Double, _ body: (inout Surface) -> Void) {
        if key(of: peer) == nil { register(peer, settings: nil, now: now) }
        guard let key = key(of: peer), var s = surfaces[key] else { return }
        body(&s)
        s.frameSentAt = -.infinity
        surfaces[key] = s
    }

    /// The track indices a surface's banks page through (its strip types; none: every strip).
    static func strips(_ session: Session, _ types: OSCSurfaceSettings.StripTypes) -> [Int] {
        guard !types.intersection([.audioTracks, .midiTracks, .audioBuses]).isEmpty else { return Array(session.tracks.indices) }
        return session.tracks.indices.filter { t in
            let track = session.tracks[t]
            if track.isBus { return types.contains(.audioBuses) }
            return types.contains(track.isMIDI ? .midiTracks : .audioTracks)
        }
    }

    /// Ardour's bank limits: 1 at least, and the last bank full when there are enough strips.
    static func bankStart(_ bank: Int, size: Int, total: Int) -> Int {
        let size = size > 0 ? size : total
        if size >= total { return 1 }
        return min(max(1, bank), total - size + 1)
    }

    /// The track strip `id` (1-based in its bank) is on `peer`'s surface, or nil.
    func track(_ id: Int, for peer: OSCPeer, in session: Session) -> Int? {
        let s = surface(of: peer)
        let strips = OSCFeedback.strips(session, s.settings.stripTypes)
        let bank = OSCFeedback.bankStart(s.bank, size: s.settings.bankSize, total: strips.count)
        if s.settings.bankSize > 0 && id > s.settings.bankSize { return nil }
        let i = bank - 1 + id - 1
        return strips.indices.contains(i) ? strips[i] : nil
    }

    /// Sends each surface whose frame is due what changed since it was last told.
    public func update(_ view: OSCView, wind: OSCWind = .none, now: Double) {
        for (peer, var surface) in surfaces {
            guard now - surface.frameSentAt >= 1 / OSCFeedback.framesPerSecond else {
                surfaces[peer]?.pending = true
                continue
            }
            surface.frameSentAt = now
            surface.pending = false
            let strips = OSCFeedback.strips(view.session, surface.settings.stripTypes)
            surface.bank = OSCFeedback.bankStart(surface.bank, size: surface.settings.bankSize, total: strips.count)
            if let t = surface.selected, !view.session.tracks.indices.contains(t) { surface.selected = nil }
            var state = OSCFeedbackState(settings: surface.settings, view: view, wind: wind, now: now)
            let slots = surface.settings.bankSize > 0 ? surface.settings.bankSize : max(strips.count, surface.slotsShown)
            surface.slotsShown = slots
            for id in 1...max(1, slots) where id <= slots {
                let i = surface.bank - 1 + id - 1
                state.strip(id, strips.indices.contains(i) ? strips[i] : nil, selected: surface.selected)
            }
            state.bankButtons(bank: surface.bank, total: strips.count)
            state.master()
            state.transport()
            state.selectPage(surface.selected)
            surface.pluginParametersShown = state.pluginPage(surface.selected, plugin: &surface.plugin, page: &surface.pluginPage,
                                                             shown: surface.pluginParametersShown)
            for (key, message) in state.messages where surface.sent[key] != message {
                surface.sent[key] = message
                server.send(message, to: peer)
            }
            surfaces[peer] = surface
        }
    }

    /// How soon (seconds from `now`) a surface's next frame must go out with nothing else
    /// waking the owner: a frame held back by the rate, or the heartbeat's next beat; nil when
    /// none is (an idle owner then sleeps as long as it likes).
    public func secondsUntilDue(now: Double) -> Double? {
        let due = surfaces.values.compactMap { s -> Double? in
            if s.pending { return s.frameSentAt + 1 / OSCFeedback.framesPerSecond }
            if s.settings.feedback.contains(.heartbeat) { return now.rounded(.down) + 1 }
            return nil
        }
        return due.min().map { max(0, $0 - now) }
    }

    /// `/strip/list`'s answer to `peer`: a row per strip of its bank onwards (Ardour's
    /// `routes_list`: type, name, inputs, outputs, mute, solo, ssid, record-enable for a
    /// track), then `end_route_list` with the rate and the session's end, as `/reply` (or
    /// `#reply` unless the surface asked for `/reply` with feedback bit 16384).
    public func list(to peer: OSCPeer, _ view: OSCView) {
        let s = surface(of: peer)
        let address = s.settings.feedback.contains(.slashReply) ? "/reply" : "#reply"
        let strips = OSCFeedback.strips(view.session, s.settings.stripTypes)
        let bank = OSCFeedback.bankStart(s.bank, size: s.settings.bankSize, total: strips.count)
        let target = key(of: peer) ?? peer
        for (n, t) in strips.dropFirst(bank - 1).enumerated() {
            let track = view.session.tracks[t]
            var row: [OSCValue] = [.string(track.isBus ? "B" : track.isMIDI ? "MT" : "AT"), .string(track.name),
                                   .int(Int32(track.isBus ? track.busChannels ?? 2 : track.inputChannels.count)), .int(2),
                                   .int(track.mute ? 1 : 0), .int(track.solo ? 1 : 0), .int(Int32(n + 1))]
            if !track.isBus { row.append(.int(track.armed ? 1 : 0)) }
            server.send(OSCMessage(address, row), to: target)
        }
        server.send(OSCMessage(address, [.string("end_route_list"), .int64(Int64(view.transport.sampleRate)), .int64(view.endFrame), .int(0)]),
                    to: target)
    }
}
