import Foundation

/// What a Mackie Control surface shows: the eight strips of the bank in view, the master
/// fader, the transport's LEDs and the time display. An extender (XT) shows only its eight
/// strips (``messages(from:holding:device:extender:)``). The host keeps the state it last sent
/// and sends only what differs (``messages(from:)``), so feedback costs nothing while
/// nothing changes and a whole bank is sent when the bank changes or the surface connects.
public struct MackieSurfaceState: Equatable, Sendable {
    /// One strip.
    public struct Strip: Equatable, Sendable {
        /// The top line of the scribble strip (a track's name; empty past the last track).
        public var name = ""
        /// The bottom line (the fader's level).
        public var value = ""
        /// The fader's position, 0…16383.
        public var fader = 0
        /// Pan, −1…1, on the V-pot's ring.
        public var pan = 0.0
        /// A level (a fader position, 0…1) the ring shows instead of the pan (Flip).
        public var ringLevel: Double?
        /// The button LEDs.
        public var armed = false, solo = false, mute = false, selected = false

        /// A blank strip (faders down, LEDs off, nothing written).
        public init() {}
    }

    /// The eight strips.
    public var strips = [Strip](repeating: Strip(), count: MackieControl.stripCount)
    /// The master fader's position, 0…16383.
    public var masterFader = 0
    /// Transport LEDs.
    public var playing = false, stopped = true, recording = false, cycling = false
    /// The ten characters of the time display.
    public var time = String(repeating: " ", count: MackieControl.timeDigits)
    /// Flip's LED (faders on pan), the time display's mode (the BEATS LED, else SMPTE's),
    /// and Scrub's LED (the jog wheel shuttles).
    public var flip = false, timeInBars = false, scrub = false
    /// The two characters of the assignment display, and its dots (`.` lit).
    public var assignment = "  ", assignmentDots = "  "

    /// A blank surface.
    public init() {}

    /// The messages that make a surface showing `old` show this (everything, when `old` is
    /// nil: a surface just connected, whose state is unknown). Fader positions listed in
    /// `holding` (strips 0–8 a hand is on) are left alone: the motor would fight the hand.
    /// SysEx goes to `device` (``MackieControl/Device``). An `extender` (an XT: no master
    /// fader, transport buttons or displays, as Ardour's `Surface` of type `ext`) is sent its
    /// strips only.
    public func messages(from old: MackieSurfaceState?, holding: Set<Int> = [],
                         device: UInt8 = MackieControl.Device.mcu, extender: Bool = false) -> [[UInt8]] {
        var out: [[UInt8]] = []
        let N = MackieControl.Note.self
        for (i, strip) in strips.enumerated() {
            let was = old.map { $0.strips.indices.contains(i) ? $0.strips[i] : Strip() }
            if was?.name != strip.name { out.append(MackieControl.scribbleMessage(strip: i, line: 0, text: strip.name, device: device)) }
            if was?.value != strip.value { out.append(MackieControl.scribbleMessage(strip: i, line: 1, text: strip.value, device: device)) }
            if was?.fader != strip.fader && !holding.contains(i) { out.append(MackieControl.faderMessage(strip: i, value: strip.fader)) }
            if was?.pan != strip.pan || was?.ringLevel != strip.ringLevel {
                out.append(strip.ringLevel.map { MackieControl.levelRingMessage(strip: i, position: $0) }
                           ?? MackieControl.ringMessage(strip: i, pan: strip.pan))
            }
            let note = UInt8(i)
            if was?.armed != strip.armed { out.append(MackieControl.ledMessage(note: N.recordArm + note, on: strip.armed)) }
            if was?.solo != strip.solo { out.append(MackieControl.ledMessage(note: N.solo + note, on: strip.solo)) }
            if was?.mute != strip.mute { out.append(MackieControl.ledMessage(note: N.mute + note, on: strip.mute)) }
            if was?.selected != strip.selected { out.append(MackieControl.ledMessage(note: N.select + note, on: strip.selected)) }
        }
        if extender { return out }
        if old?.masterFader != masterFader && !holding.contains(8) { out.append(MackieControl.faderMessage(strip: 8, value: masterFader)) }
        if old?.playing != playing { out.append(MackieControl.ledMessage(note: N.play, on: playing)) }
        if old?.stopped != stopped { out.append(MackieControl.ledMessage(note: N.stop, on: stopped)) }
        if old?.recording != recording { out.append(MackieControl.ledMessage(note: N.record, on: recording)) }
        if old?.cycling != cycling { out.append(MackieControl.ledMessage(note: N.cycle, on: cycling)) }
        if old?.flip != flip { out.append(MackieControl.ledMessage(note: N.flip, on: flip)) }
        if old?.scrub != scrub { out.append(MackieControl.ledMessage(note: N.scrub, on: scrub)) }
        if old?.timeInBars != timeInBars {
            out.append(MackieControl.ledMessage(note: N.smpteLED, on: !timeInBars))
            out.append(MackieControl.ledMessage(note: N.beatsLED, on: timeInBars))
        }
        if old?.assignment != assignment || old?.assignmentDots != assignmentDots {
            out += MackieControl.assignmentMessages(assignment, dots: assignmentDots)
        }
        let digits = Array(time.padding(toLength: MackieControl.timeDigits, withPad: " ", startingAt: 0))
        let oldDigits = old.map { Array($0.time.padding(toLength: MackieControl.timeDigits, withPad: " ", startingAt: 0)) }
        for k in 0..<MackieControl.timeDigits where oldDigits?[k] != digits[k] {
            // Dots after the hours, the minutes and the seconds.
            out.append(MackieControl.timeDigitMessage(index: k, character: digits[k], dot: k == 2 || k == 4 || k == 6))
        }
        return out
    }
}
