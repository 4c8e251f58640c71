/// One mixer value moved, as the one who moved it says it: a strip's fader, pan, mute or
/// solo, a send's level or pan, the master fader. The screen, a remote surface and a
/// headless command hand these to the transport, which writes exactly that value to the
/// engine, never the values around it: a fader a MIDI controller is moving at the same time
/// keeps the controller's value (a whole-session push would write the older one back).
///
/// Strips and sends are places (the session's track order, a strip's send order), as the
/// engine counts them.
public enum MixerChange: Equatable, Sendable {
    /// Strip `strip`'s fader, in dB (``Fader/silentDecibels`` or below: silent).
    case gain(strip: Int, decibels: Double)
    /// Strip `strip`'s pan or balance, −1…1.
    case pan(strip: Int, value: Double)
    /// Strip `strip` muted or not.
    case mute(strip: Int, on: Bool)
    /// Strip `strip` soloed or not.
    case solo(strip: Int, on: Bool)
    /// Send `send` of strip `strip`: its level in dB.
    case sendLevel(strip: Int, send: Int, decibels: Double)
    /// Send `send` of strip `strip`: its pan, −1…1.
    case sendPan(strip: Int, send: Int, value: Double)
    /// The master fader, in dB.
    case masterGain(decibels: Double)

    /// The change with its value as a session holds it; nil when the value is not a number.
    public var held: MixerChange? {
        func level(_ dB: Double) -> Double? { dB.isNaN ? nil : min(max(Fader.silentDecibels, dB), Fader.maximumDecibels) }
        func pan(_ v: Double) -> Double? { v.isNaN ? nil : min(max(v, -1), 1) }
        switch self {
        case .gain(let s, let dB): return level(dB).map { .gain(strip: s, decibels: $0) }
        case .pan(let s, let v): return pan(v).map { .pan(strip: s, value: $0) }
        case .sendLevel(let s, let k, let dB): return level(dB).map { .sendLevel(strip: s, send: k, decibels: $0) }
        case .sendPan(let s, let k, let v): return pan(v).map { .sendPan(strip: s, send: k, value: $0) }
        case .masterGain(let dB): return level(dB).map { .masterGain(decibels: $0) }
        case .mute, .solo: return self
        }
    }

    /// The strip it moves (nil: the master).
    public var strip: Int? {
        switch self {
        case .gain(let s, _), .pan(let s, _), .mute(let s, _), .solo(let s, _), .sendLevel(let s, _, _), .sendPan(let s, _, _): s
        case .masterGain: nil
        }
    }

    /// The lane a hand writes while moving it (nil: solo, a send's pan and the master have none).
    public func automationParameter(in session: Session) -> AutomationParameter? {
        switch self {
        case .gain: return .gain
        case .pan: return .pan
        case .mute: return .mute
        case .sendLevel(let s, let k, _):
            guard session.tracks.indices.contains(s), session.tracks[s].sends.indices.contains(k) else { return nil }
            // Lanes are found by name in any case (``Track/laneIndex(_:)``).
            return .send(session.tracks[s].sends[k].bus)
        case .solo, .sendPan, .masterGain: return nil
        }
    }
}

extension Session {
    /// Applies `change`, its value made one a session can hold (a level clamped to
    /// −∞ (``Fader/silentDecibels``)…``Fader/maximumDecibels``, a pan to −1…1). Returns false,
    /// changing nothing, when it names a strip or send this session does not have, the value
    /// is not a number, or it is already so.
    @discardableResult
    public mutating func apply(_ change: MixerChange) -> Bool {
        if let s = change.strip, !tracks.indices.contains(s) { return false }
        guard let change = change.held else { return false }
        switch change {
        case .gain(let s, let dB):
            guard tracks[s].gainDecibels != dB else { return false }
            tracks[s].gainDecibels = dB
        case .pan(let s, let value):
            guard tracks[s].pan != value else { return false }
            tracks[s].pan = value
        case .mute(let s, let on):
            guard tracks[s].mute != on else { return false }
            tracks[s].mute = on
        case .solo(let s, let on):
            guard tracks[s].solo != on else { return false }
            tracks[s].solo = on
        case .sendLevel(let s, let k, let dB):
            guard tracks[s].sends.indices.contains(k), tracks[s].sends[k].levelDecibels != dB else { return false }
            tracks[s].sends[k].levelDecibels = dB
        case .sendPan(let s, let k, let value):
            guard tracks[s].sends.indices.contains(k), tracks[s].sends[k].pan != value else { return false }
            tracks[s].sends[k].pan = value
        case .masterGain(let dB):
            guard masterGainDecibels != dB else { return false }
            masterGainDecibels = dB
        }
        return true
    }

    /// The mixer values that differ between this session and `next`, strip by strip (for a
    /// session replaced whole: an undo, a command from another process). Strips are matched
    /// by place; a strip or send only `next` has is not a change (it comes with its graph).
    public func mixerChanges(to next: Session) -> [MixerChange] {
        var changes: [MixerChange] = []
        if masterGainDecibels != next.masterGainDecibels { changes.append(.masterGain(decibels: next.masterGainDecibels)) }
        for (s, (a, b)) in zip(tracks, next.tracks).enumerated() {
            if a.gainDecibels != b.gainDecibels { changes.append(.gain(strip: s, decibels: b.gainDecibels)) }
            if a.pan != b.pan { changes.append(.pan(strip: s, value: b.pan)) }
            if a.mute != b.mute { changes.append(.mute(strip: s, on: b.mute)) }
            if a.solo != b.solo { changes.append(.solo(strip: s, on: b.solo)) }
            for (k, (x, y)) in zip(a.sends, b.sends).enumerated() {
                if x.levelDecibels != y.levelDecibels { changes.append(.sendLevel(strip: s, send: k, decibels: y.levelDecibels)) }
                if x.pan != y.pan { changes.append(.sendPan(strip: s, send: k, value: y.pan)) }
            }
        }
        return changes
    }
}
