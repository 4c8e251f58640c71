import TapedeckCore
import TapedeckRemote
import TapedeckTransport
#if canImport(Glibc)
import Glibc
#endif

/// Where the screen's Mackie Control surface is heard and answered: ``Transport`` (its MIDI
/// input ports and feedback outputs), or a test's fake.
public protocol MackieSurfaceLink: AnyObject {
    /// What the surface did since the last call. UI thread.
    func collectSurfaceMessages() -> [MackieMessage]
    /// Sends feedback to the surface. UI thread.
    func sendToSurface(_ messages: [[UInt8]])
    /// How many extenders (Mackie Control XT) the surface has, each on a port pair of its
    /// own: their strips follow the main unit's, eight each. Read once, when the service
    /// starts. UI thread.
    var surfaceExtenderCount: Int { get }
    /// What extender `index` (0 the first XT) did since the last call. UI thread.
    func collectExtenderMessages(_ index: Int) -> [MackieMessage]
    /// Sends feedback to extender `index`. UI thread.
    func sendToExtender(_ index: Int, _ messages: [[UInt8]])
}

extension MackieSurfaceLink {
    /// No extenders.
    public var surfaceExtenderCount: Int { 0 }
    /// Nothing (no extenders).
    public func collectExtenderMessages(_ index: Int) -> [MackieMessage] { [] }
    /// Nowhere (no extenders).
    public func sendToExtender(_ index: Int, _ messages: [[UInt8]]) {}
}

extension Transport: MackieSurfaceLink {}

/// A Mackie Control surface on the screen (`--midi-surface mcu`), served by the screen's
/// loop between keys like the control socket.
///
/// What the surface does goes through the screen's session as its keys do: undoable, told to
/// the engine, shown. A fader gesture is one undo step (from touch to release, or, on a
/// surface without touch sensors, until it rests for a second), as are V-pot turns.
///
/// Extenders (XT), each on a port pair of its own, carry the strips after the main unit's,
/// as Ardour's "Mackie Control with One Extender" lays them out: the first XT strips 9–16
/// of the bank, the next 17–24. Their strips are the main unit's in every way (faders,
/// buttons, V-pots, scribble strips in the XT's own SysEx header 0x15, meters); the master
/// fader, the transport, the jog wheel and the displays are the main unit's only. Bank
/// left/right move by every strip there is (8 per unit, as Ardour's `n_strips`), channel
/// left/right by one.
///
/// Feedback follows the screen's state, whatever changed it (a key, a `ctl` command, undo):
/// the service keeps what the surface shows and sends only the difference, the time display
/// at most 20 times a second. A fader a hand is on (touched, or moved in the last half
/// second) gets no motor feedback: the motor would fight the hand.
///
/// As Ardour does (see ScreenMackie+Host.swift): the device query on connect and the Logic
/// Control challenge answered; meters while rolling; the jog wheel (scroll, or shuttle after
/// Scrub); Flip (faders on pan, V-pots on level); the time display in the session's
/// timecode or bars and beats (SMPTE/Beats); the bank on the assignment display.
public final class ScreenMackie: ScreenService {
    let surface: MackieSurfaceLink
    let clock: () -> Double
    /// The first track of the bank on the surface.
    public private(set) var bankStart = 0
    /// Extenders (XT) after the main unit.
    let extenderCount: Int
    /// What each unit (0 the main one, then the extenders) shows (nil: unknown, everything is sent).
    var shown: [MackieSurfaceState?]
    /// The master fader's key in ``touched`` and ``movedAt`` (strips count from 0 across the units).
    static let master = -1
    /// Faders touched now (strips across the units, or ``master``).
    var touched: Set<Int> = []
    /// When the surface last moved each fader (the same keys).
    var movedAt: [Int: Double] = [:]
    /// When each gesture (`fader 3`, `pan 1`) last moved: a move within a second continues it.
    var gestureAt: [String: Double] = [:]
    var timeSentAt = -1.0
    /// Whether the device queries went out (the first service).
    var greeted = false
    /// The device byte of each unit's SysEx: 0x14, an XT's 0x15, until the unit answers in
    /// its own (a Logic Control's is 0x10, its XT's 0x11), as Ardour's `sysex_hdr` does.
    var deviceIDs: [UInt8]
    /// Faders on pan and V-pots on level (Flip).
    public internal(set) var flipped = false
    /// The time display in bars and beats (SMPTE/Beats), else in the session's timecode.
    public internal(set) var timeInBars = false
    /// The jog wheel shuttles (Scrub lit), else it scrolls the playhead.
    public internal(set) var jogShuttles = false
    /// Whether the strips' meters are on (while rolling), when they were last sent, and which
    /// overload LEDs are lit.
    var metering = false, metersSentAt = -1.0
    var overloaded: [Bool]

    /// Serves the surface `surface` hears and answers through.
    public convenience init(surface: MackieSurfaceLink) {
        self.init(surface: surface, clock: { MonotonicClock.seconds() })
    }

    /// The same, with `clock` giving seconds (tests).
    init(surface: MackieSurfaceLink, clock: @escaping () -> Double) {
        self.surface = surface
        self.clock = clock
        extenderCount = max(0, surface.surfaceExtenderCount)
        shown = Array(repeating: nil, count: 1 + extenderCount)
        deviceIDs = [MackieControl.Device.mcu] + Array(repeating: MackieControl.Device.xt, count: extenderCount)
        overloaded = Array(repeating: false, count: MackieControl.stripCount * (1 + extenderCount))
    }

    /// The main unit and the extenders.
    var unitCount: Int { 1 + extenderCount }
    /// Strips on the surface, every unit's: a bank.
    public var stripsPerBank: Int { MackieControl.stripCount * unitCount }

    /// Sends `messages` to `unit` (0 the main one). UI thread.
    func send(_ unit: Int, _ messages: [[UInt8]]) {
        guard !messages.isEmpty else { return }
        if unit == 0 { surface.sendToSurface(messages) } else { surface.sendToExtender(unit - 1, messages) }
    }

    /// Nothing to wait on: the screen's loop wakes at least four times a second and serves it.
    public var pollDescriptors: [pollfd] { [] }

    /// Acts on what the surface did, then sends what changed. UI thread.
    public func service(_ model: ScreenModel) {
        let now = clock()
        if !greeted {
            greeted = true
            // Ardour's `say_hello`, on every unit's port.
            for unit in 0..<unitCount { send(unit, MackieControl.greeting) }
        }
        for message in surface.collectSurfaceMessages() { handle(message, model: model, now: now) }
        for x in 0..<extenderCount {
            for message in surface.collectExtenderMessages(x) { handle(message, unit: x + 1, model: model, now: now) }
        }
        sendFeedback(model, now: now)
        sendMeters(model, now: now)
    }

    // MARK: - From the surface

    /// The key of fader `strip` (0–7, 8 the master) of `unit`: its strip across the units, or
    /// ``master``; nil for a master fader on an extender (it has none).
    func faderKey(_ strip: Int, unit: Int) -> Int? {
        guard strip < MackieControl.stripCount else { return unit == 0 ? Self.master : nil }
        return unit * MackieControl.stripCount + strip
    }

    /// What `unit` (0 the main one, then the extenders) did. UI thread.
    func handle(_ message: MackieMessage, unit: Int = 0, model: ScreenModel, now: Double) {
        let base = unit * MackieControl.stripCount
        switch message {
        case .fader(let strip, let value):
            guard let key = faderKey(strip, unit: unit) else { return }
            if flipped && key != Self.master {
                panByFader(key, value: value, model: model, now: now)
            } else {
                moveFader(key, to: MackieControl.decibels(faderValue: value), model: model, now: now)
            }
            movedAt[key] = now
            shown[unit]?.setFader(strip, value)
        case .touch(let strip, let on):
            guard let key = faderKey(strip, unit: unit) else { return }
            if on { touched.insert(key) } else { touched.remove(key) }
            // A touch begins a gesture, a release ends it: either way the next move is a new step.
            gestureAt["fader \(key)"] = nil
            if !on { movedAt[key] = nil }
        case .vpot(let strip, let steps) where flipped:
            levelByVPot(base + strip, steps: steps, model: model, now: now)
        case .vpot(let local, let steps):
            let strip = base + local
            guard let t = track(strip, model) else { return }
            let next = min(1, max(-1, model.session.tracks[t].pan + Double(steps) * Pan.fineStep))
            // At a stop the turn changes nothing: no undo step for it.
            guard next != model.session.tracks[t].pan else { return }
            gestureEdit("pan \(strip)", model: model, now: now, .pan(strip: t, value: next))
        case .button(let note, let pressed):
            guard pressed else { return }
            press(note, unit: unit, model: model)
        case .jog(let steps):
            guard unit == 0 else { return }
            jog(steps, model: model)
        case .handshake(let device, let command, let serial, let challenge):
            handshake(device: device, command: command, serial: serial, challenge: challenge, unit: unit, model: model)
        }
    }

    func moveFader(_ strip: Int, to db: Double, model: ScreenModel, now: Double) {
        // A move within the same 0.1 dB changes nothing: no undo step for it.
        if strip == Self.master {
            guard db != model.session.masterGainDecibels else { return }
            gestureEdit("fader \(Self.master)", model: model, now: now, .masterGain(decibels: db))
            return
        }
        guard let t = track(strip, model), db != model.session.tracks[t].gainDecibels else { return }
        gestureEdit("fader \(strip)", model: model, now: now, .gain(strip: t, decibels: db))
    }

    /// One undo step per gesture: a move continuing one (a fader touched, or moved within a
    /// second) joins its step. The change itself is the screen's, as every surface's is.
    func gestureEdit(_ key: String, model: ScreenModel, now: Double, _ change: MixerChange) {
        let strip = Int(key.split(separator: " ").last ?? "") ?? -1
        let continuing = key.hasPrefix("fader") && touched.contains(strip) && gestureAt[key] != nil
            || gestureAt[key].map { now - $0 < 1 } == true
        ask(.mixer(change), model: model, continuing: continuing)
        gestureAt[key] = now
    }

    /// Hands `command` to the screen as every surface does (``SurfaceHost``): no edit code of
    /// the surface's own. A refusal is said on the message line.
    func ask(_ command: SurfaceCommand, model: ScreenModel, continuing: Bool = false) {
        if let why = model.perform(command, from: .mackie, continuing: continuing) { model.say("surface: \(why)", error: true) }
    }

    private func press(_ note: UInt8, unit: Int, model: ScreenModel) {
        let N = MackieControl.Note.self
        let count = model.session.tracks.count, base = unit * MackieControl.stripCount
        // An extender has strip buttons only.
        guard unit == 0 || note < N.select + 8 else { return }
        switch note {
        case N.recordArm..<N.solo, N.solo..<N.mute, N.mute..<N.select:
            guard let t = track(base + Int(note % 8), model) else { return }
            let track = model.session.tracks[t]
            if note < N.solo {
                ask(.arm(strip: t, on: !track.armed), model: model)
            } else if note < N.mute {
                ask(.mixer(.solo(strip: t, on: !track.solo)), model: model)
            } else {
                ask(.mixer(.mute(strip: t, on: !track.mute)), model: model)
            }
        case N.select..<(N.select + 8):
            guard let t = track(base + Int(note - N.select), model) else { return }
            model.selectTrack(t)
        case N.bankLeft, N.bankRight, N.channelLeft, N.channelRight:
            // A bank is every strip of every unit (Ardour's `left_press` and `right_press`
            // step by `n_strips()`, 16 with one XT).
            let step = note == N.bankLeft || note == N.bankRight ? stripsPerBank : 1
            let next = note == N.bankLeft || note == N.channelLeft ? max(0, bankStart - step) : bankStart + step
            // Right stops where no track would be left on the surface's first strip's bank (a
            // channel step: on its last strip); left always goes back.
            let right = note == N.bankRight || note == N.channelRight
            guard next != bankStart, !right || next + (step == 1 ? stripsPerBank - 1 : 0) < count else {
                model.say("surface: tracks \(bankRange(count)) (no more tracks that way)")
                return
            }
            bankStart = next
            model.say("surface: tracks \(bankRange(count))")
        case N.marker:
            ask(.addMarker(name: nil), model: model)
        case N.flip, N.timecodeBeats, N.scrub:
            pressHostButton(note, model: model)
        default:
            break
        }
    }

    private func bankRange(_ count: Int) -> String {
        "\(bankStart + 1)-\(min(count, bankStart + stripsPerBank))"
    }

    /// The track on `strip` (0–7 the main unit's, 8–15 the first extender's, …) of the bank,
    /// if there is one.
    func track(_ strip: Int, _ model: ScreenModel) -> Int? {
        let t = bankStart + strip
        return strip >= 0 && strip < stripsPerBank && model.session.tracks.indices.contains(t) ? t : nil
    }

    // MARK: - To the surface

    /// What each unit should show now (0 the main one, then the extenders).
    func wanted(_ model: ScreenModel, now: Double) -> [MackieSurfaceState] {
        let session = model.session
        // Tracks deleted under the bank: back to the last whole bank.
        if bankStart >= session.tracks.count { bankStart = max(0, (session.tracks.count - 1) / stripsPerBank * stripsPerBank) }
        var units = [MackieSurfaceState](repeating: MackieSurfaceState(), count: unitCount)
        for g in 0..<stripsPerBank {
            let t = bankStart + g, i = g % MackieControl.stripCount
            guard session.tracks.indices.contains(t) else { continue }
            var state = units[g / MackieControl.stripCount]
            defer { units[g / MackieControl.stripCount] = state }
            let track = session.tracks[t]
            state.strips[i].name = track.name
            state.strips[i].value = Fader.text(track.gainDecibels)
            let pan = track.isBus ? 0 : track.pan
            if flipped {
                // The fader on pan (hard left at the bottom), the ring on the level.
                state.strips[i].fader = MackieControl.faderValue(pan: pan)
                state.strips[i].ringLevel = MackieControl.position(decibels: track.gainDecibels)
            } else {
                state.strips[i].fader = MackieControl.faderValue(decibels: track.gainDecibels)
                state.strips[i].pan = pan
            }
            state.strips[i].armed = track.armed
            state.strips[i].solo = track.solo
            state.strips[i].mute = track.mute
            state.strips[i].selected = model.selectedTrack == t && !model.masterStripSelected
        }
        // The master, the transport and the displays: the main unit's.
        var state = units[0]
        state.masterFader = MackieControl.faderValue(decibels: session.masterGainDecibels)
        let transport = model.snapshot.state
        state.playing = transport.isMoving
        state.stopped = !transport.isMoving
        state.recording = transport.isRecordingPass
        state.cycling = session.loopEnabled
        state.flip = flipped
        state.timeInBars = timeInBars
        state.scrub = jogShuttles
        // The bank on the assignment display, as Ardour's `display_bank_start` shows it.
        state.assignment = bankStart == 0 ? "Ar" : String(format: "%02d", bankStart % 100)
        state.assignmentDots = bankStart == 0 ? ".." : "  "
        // The time display at most 20 times a second (it is most of the traffic while rolling).
        if let shown = shown[0], now - timeSentAt < 0.05 {
            state.time = shown.time
        } else {
            state.time = timeDigits(model)
        }
        units[0] = state
        return units
    }

    func sendFeedback(_ model: ScreenModel, now: Double) {
        var next = wanted(model, now: now)
        for unit in 0..<unitCount {
            // The unit's faders (0–7, 8 the master) a hand is on.
            let holding = Set((0...MackieControl.stripCount).filter { s in
                guard let key = faderKey(s, unit: unit) else { return false }
                return touched.contains(key) || movedAt[key].map { now - $0 < 0.5 } == true
            })
            let messages = next[unit].messages(from: shown[unit], holding: holding, device: deviceIDs[unit], extender: unit > 0)
            // Held faders stay where the hand put them, as far as we know.
            if let old = shown[unit] { for s in holding { next[unit].setFader(s, old.fader(s)) } }
            if unit == 0 && shown[0]?.time != next[0].time { timeSentAt = now }
            shown[unit] = next[unit]
            send(unit, messages)
        }
    }
}

extension MackieSurfaceState {
    /// Fader `strip`'s position (8: the master).
    func fader(_ strip: Int) -> Int {
        strip == 8 ? masterFader : strips.indices.contains(strip) ? strips[strip].fader : 0
    }

    /// Sets fader `strip`'s position (8: the master).
    mutating func setFader(_ strip: Int, _ value: Int) {
        if strip == 8 { masterFader = value } else if strips.indices.contains(strip) { strips[strip].fader = value }
    }
}
