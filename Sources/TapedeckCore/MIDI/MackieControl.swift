import Foundation

/// The Mackie Control protocol, as surfaces (Mackie MCU, Behringer X-Touch, iCON, and the
/// software surfaces that emulate them) speak it: reading what a surface sends and writing
/// what it shows. No I/O here; decoding allocates nothing, so any MIDI thread may call it.
///
/// From the surface: faders 1–8 as 14-bit pitch-bend on channels 1–8 (the master on 9), fader
/// touch as notes 104–112, V-pots as relative CC 16–23, buttons as notes on channel 1
/// (velocity 127 pressed, 0 released). To the surface: the same pitch-bend moves the motor
/// faders, notes light the buttons' LEDs, CC 48–55 set the V-pot rings, CC 64–73 the time
/// display's digits, and SysEx `F0 00 00 66 14 12 offset text F7` writes the scribble strips.

/// One thing a Mackie Control surface did.
public enum MackieMessage: Equatable, Sendable, BitwiseCopyable {
    /// Fader `strip` (0–7, 8 the master) moved to `position` (0…16383).
    case fader(strip: Int, position: Int)
    /// Fader `strip` (0–7, 8 the master) touched or let go.
    case touch(strip: Int, touched: Bool)
    /// V-pot `strip` (0–7) turned `steps` detents (positive clockwise).
    case vpot(strip: Int, steps: Int)
    /// A button (its note number, see ``MackieControl/Note``) pressed or released.
    case button(note: UInt8, pressed: Bool)
    /// The jog wheel turned `steps` detents (positive clockwise).
    case jog(steps: Int)
    /// A handshake SysEx from `device` (``MackieControl/Device``): `command`
    /// (``MackieControl/Handshake``), the unit's serial number (seven 7-bit bytes, the first
    /// in the top byte used) and a Logic Control's four-byte challenge (0 when absent).
    case handshake(device: UInt8, command: UInt8, serial: UInt64, challenge: UInt32)
}

/// Encoding and decoding of the Mackie Control protocol (see ``MackieMessage``).
public enum MackieControl {
    /// Strips per bank (and per surface).
    public static let stripCount = 8
    /// The highest fader position (14 bits).
    public static let maximumPosition = 16383
    /// Characters per strip on each line of the scribble strips.
    public static let stripCharacters = 7
    /// Digits of the time display.
    public static let timeDigits = 10

    /// Button note numbers (channel 1).
    public enum Note {
        /// Record arm, strips 1–8: 0–7.
        public static let recordArm: UInt8 = 0x00
        /// Solo, strips 1–8: 8–15.
        public static let solo: UInt8 = 0x08
        /// Mute, strips 1–8: 16–23.
        public static let mute: UInt8 = 0x10
        /// Select, strips 1–8: 24–31.
        public static let select: UInt8 = 0x18
        /// Bank left and right (eight strips).
        public static let bankLeft: UInt8 = 0x2E, bankRight: UInt8 = 0x2F
        /// Channel left and right (one strip).
        public static let channelLeft: UInt8 = 0x30, channelRight: UInt8 = 0x31
        /// Marker.
        public static let marker: UInt8 = 0x54
        /// Cycle (loop).
        public static let cycle: UInt8 = 0x56
        /// Flip (faders and V-pots swap), and the time display's SMPTE/Beats switch.
        public static let flip: UInt8 = 0x32, timecodeBeats: UInt8 = 0x35
        /// Scrub (the jog wheel shuttles).
        public static let scrub: UInt8 = 0x65
        /// The time display's mode LEDs (no buttons).
        public static let smpteLED: UInt8 = 0x71, beatsLED: UInt8 = 0x72
        /// Transport.
        public static let rewind: UInt8 = 0x5B, fastForward: UInt8 = 0x5C, stop: UInt8 = 0x5D, play: UInt8 = 0x5E, record: UInt8 = 0x5F
        /// Fader touch, strips 1–8 and the master: 104–112.
        public static let faderTouch: UInt8 = 0x68
    }

    // MARK: - Reading

    /// What a channel message from a surface means, or nil when it is none of the surface's
    /// controls (other channels, other controllers, an unturned V-pot). Any thread; no
    /// allocation.
    public static func decode(status: UInt8, data1: UInt8, data2: UInt8) -> MackieMessage? {
        let kind = status & 0xF0, channel = Int(status & 0x0F)
        let d1 = data1 & 0x7F, d2 = data2 & 0x7F
        switch kind {
        case 0xE0:
            guard channel <= 8 else { return nil }
            return .fader(strip: channel, position: Int(d1) | Int(d2) << 7)
        case 0x90, 0x80:
            guard channel == 0 else { return nil }
            let on = kind == 0x90 && d2 > 0
            if d1 >= Note.faderTouch && d1 <= Note.faderTouch + 8 { return .touch(strip: Int(d1 - Note.faderTouch), touched: on) }
            return .button(note: d1, pressed: on)
        case 0xB0:
            guard channel == 0 else { return nil }
            // Bit 6 is the direction (set: counter-clockwise), the low bits the detents.
            let count = Int(d2 & 0x3F)
            if d1 == jogController {
                // Some wheels send 0 detents meaning one (Ardour counts it as one).
                return .jog(steps: d2 & 0x40 != 0 ? -max(count, 1) : max(count, 1))
            }
            guard d1 >= 0x10, d1 <= 0x17, count > 0 else { return nil }
            return .vpot(strip: Int(d1 - 0x10), steps: d2 & 0x40 != 0 ? -count : count)
        default:
            return nil
        }
    }

    /// What the bytes of one message from a surface mean (see
    /// ``decode(status:data1:data2:)``); nil for short, SysEx or other messages.
    public static func decode(_ bytes: [UInt8]) -> MackieMessage? {
        guard bytes.count >= 3, bytes[0] >= 0x80, bytes[0] < 0xF0 else { return nil }
        return decode(status: bytes[0], data1: bytes[1], data2: bytes[2])
    }

    // MARK: - The fader's curve

    /// The level the top of a surface fader stands for, as Tapedeck keeps levels (0.1 dB
    /// steps): Ardour's top is a gain of 2 (+6.02 dB), which rounds to +6.0.
    public static let topDecibels = 6.0

    /// Where `decibels` sits on a surface fader, 0…1: Ardour's `gain_to_slider_position`
    /// (the curve Mackie hosts use), `((6·log2(gain) + 192) / 198)^8`, whose top is a gain of
    /// 2 and which puts 0 dB at 0.78 of the travel. −∞ (and anything that would fall below the
    /// bottom) is 0; ``topDecibels`` and above is the top, so a fader pushed all the way up
    /// (read as +6.0 dB) gets its motor sent back to 16383, not to the 16369 that +6.0 itself
    /// would give on the curve.
    public static func position(decibels: Double) -> Double {
        guard decibels.isFinite, !Fader.isSilent(decibels) else { return decibels == .infinity ? 1 : 0 }
        guard decibels < topDecibels else { return 1 }
        let log2Gain = decibels / (20 * log10(2.0))
        let base = (6 * log2Gain + 192) / 198
        guard base > 0 else { return 0 }
        return min(1, pow(base, 8))
    }

    /// The level at `position` (0…1) on a surface fader, the inverse of
    /// ``position(decibels:)``, rounded to 0.1 dB: the bottom is −∞
    /// (``Fader/silentDecibels``), and so is anything below ``Fader/floorDecibels``, as a
    /// step below the floor is on the screen.
    public static func decibels(position: Double) -> Double {
        guard position.isFinite, position > 0 else { return Fader.silentDecibels }
        let log2Gain = (pow(min(1, position), 1.0 / 8) * 198 - 192) / 6
        let db = (log2Gain * 20 * log10(2.0) * 10).rounded() / 10
        return db < Fader.floorDecibels ? Fader.silentDecibels : db
    }

    /// The 14-bit pitch-bend value for a fader at `decibels`.
    public static func faderValue(decibels: Double) -> Int {
        Int((position(decibels: decibels) * Double(maximumPosition)).rounded())
    }

    /// The 14-bit pitch-bend value for a fader on pan (Flip): hard left at the bottom, the
    /// centre in the middle.
    public static func faderValue(pan: Double) -> Int {
        let p = pan.isFinite ? min(max(pan, -1), 1) : 0
        return Int(((p + 1) / 2 * Double(maximumPosition)).rounded())
    }

    /// The pan a fader on pan stands for at `faderValue` (Flip), to the screen's pan step.
    public static func pan(faderValue: Int) -> Double {
        let p = Double(min(max(faderValue, 0), maximumPosition)) / Double(maximumPosition) * 2 - 1
        return (p / Pan.fineStep).rounded() * Pan.fineStep
    }

    /// The level a 14-bit fader value stands for (out-of-range values clamped).
    public static func decibels(faderValue: Int) -> Double {
        decibels(position: Double(min(max(faderValue, 0), maximumPosition)) / Double(maximumPosition))
    }

    // MARK: - Writing

    /// Pitch-bend moving fader `strip` (0–8) to `value` (0…16383, clamped).
    public static func faderMessage(strip: Int, value: Int) -> [UInt8] {
        let v = min(max(value, 0), maximumPosition)
        return [0xE0 | UInt8(min(max(strip, 0), 8)), UInt8(v & 0x7F), UInt8(v >> 7)]
    }

    /// A button's LED on or off.
    public static func ledMessage(note: UInt8, on: Bool) -> [UInt8] { [0x90, note & 0x7F, on ? 0x7F : 0x00] }

    /// The LED ring of V-pot `strip` (0–7) showing `pan` (−1…1) as a single dot: 1 hard
    /// left, 6 the centre, 11 hard right.
    public static func ringMessage(strip: Int, pan: Double) -> [UInt8] {
        let p = pan.isFinite ? min(max(pan, -1), 1) : 0
        return [0xB0, 0x30 + UInt8(min(max(strip, 0), 7)), UInt8(1 + Int(((p + 1) * 5).rounded()))]
    }

    /// The LED ring of V-pot `strip` (0–7) showing a level (a fader position, 0…1) filled
    /// from the left, as Ardour's `Pot::set` writes it in wrap mode (the centre LED lit near
    /// the middle).
    public static func levelRingMessage(strip: Int, position: Double) -> [UInt8] {
        let p = position.isFinite ? min(max(position, 0), 1) : 0
        let centre: UInt8 = p > 0.48 && p < 0.58 ? 0x40 : 0
        return [0xB0, 0x30 + UInt8(min(max(strip, 0), 7)), centre | 0x20 | UInt8(Int((p * 10).rounded()) + 1)]
    }

    /// `text` as the scribble strips show it (they have ASCII only): folded to its nearest
    /// ASCII by ICU's `Any-Latin; Latin-ASCII` transliteration (`üŋ` is `un`, `Chœur` is
    /// `Choeur`, `Москва` is `Moskva`), then anything still not printable ASCII (control
    /// characters, emoji) a `?` per character, cut or padded with spaces to `length`.
    /// Allocates (the transliteration): the UI thread's.
    public static func displayText(_ text: String, length: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length)
        let folded = text.unicodeScalars.allSatisfy({ $0.isASCII }) ? text
            : text.applyingTransform(StringTransform("Any-Latin; Latin-ASCII"), reverse: false) ?? text
        for scalar in folded.unicodeScalars where out.count < length {
            out.append(scalar.value >= 0x20 && scalar.value < 0x7F ? UInt8(scalar.value) : UInt8(ascii: "?"))
        }
        while out.count < length { out.append(0x20) }
        return out
    }

    /// SysEx writing one strip's cell on a scribble-strip line (`line` 0 the top, 1 the
    /// bottom): six characters of `text` and a space, so neighbouring names stay apart.
    /// SysEx goes to `device` (a Logic Control answers to its own, see ``Device``).
    public static func scribbleMessage(strip: Int, line: Int, text: String, device: UInt8 = Device.mcu) -> [UInt8] {
        let offset = (line == 0 ? 0 : 56) + min(max(strip, 0), 7) * stripCharacters
        return [0xF0, 0x00, 0x00, 0x66, device & 0x7F, 0x12, UInt8(offset)]
            + displayText(text, length: stripCharacters - 1) + [0x20, 0xF7]
    }

    /// The time display's character code for `character` (the surface's 7-segment set:
    /// digits and punctuation as in ASCII, letters as `A` = 1), with the dot lit when asked.
    public static func segmentCode(_ character: Character, dot: Bool = false) -> UInt8 {
        let c = character.uppercased().unicodeScalars.first.map { $0.value } ?? 0x20
        let code: UInt8
        if c >= 0x40 && c <= 0x60 { code = UInt8(c - 0x40) } else if c >= 0x20 && c < 0x40 { code = UInt8(c) } else { code = 0x20 }
        return code | (dot ? 0x40 : 0)
    }

    /// CC messages writing digit `index` (0 the leftmost of ten) of the time display.
    public static func timeDigitMessage(index: Int, character: Character, dot: Bool = false) -> [UInt8] {
        // CC 64 is the rightmost digit, CC 73 the leftmost.
        [0xB0, UInt8(0x40 + (timeDigits - 1 - min(max(index, 0), timeDigits - 1))), segmentCode(character, dot: dot)]
    }

    /// The ten digits the time display shows for a timecode, as Ardour's
    /// `format_timecode_timecode` lays them out: `HH MMSS FF` (hours shown modulo 100, so a
    /// very long session cannot push the frames off the display).
    public static func timecodeDigits(_ t: Timecode) -> String {
        func two(_ v: Int64) -> String { v < 10 ? "0\(v)" : "\(v)" }
        return two(t.hours % 100) + " " + two(t.minutes) + two(t.seconds) + " " + two(t.frames)
    }
}
