import Foundation

// The host's side of a Mackie or Logic Control connection beyond faders, buttons and strips,
// as Ardour's surface code speaks it (libs/surfaces/mackie: surface.cc, meter.cc,
// jog_wheel.cc): the device query and the Logic Control challenge, meters, the jog wheel and
// the two-character assignment display.

extension MackieControl {
    /// The device byte of the SysEx header: which kind of unit a message is for or from.
    public enum Device {
        /// Mackie Control (Universal), the main unit.
        public static let mcu: UInt8 = 0x14
        /// Mackie Control XT, an extender of eight strips.
        public static let xt: UInt8 = 0x15
        /// Logic Control, which must be answered its challenge before it works.
        public static let logic: UInt8 = 0x10
        /// Logic Control XT.
        public static let logicXT: UInt8 = 0x11

        /// Whether `device` is a Logic Control unit (the challenge is answered).
        public static func isLogic(_ device: UInt8) -> Bool { device == logic || device == logicXT }
        /// Whether `device` is one of the four.
        public static func isKnown(_ device: UInt8) -> Bool { device == mcu || device == xt || isLogic(device) }
    }

    /// SysEx commands of the handshake.
    public enum Handshake {
        /// Host to surface: the device query (wake up). Surface to host: the answer, with
        /// its serial number and (Logic Control) a four-byte challenge.
        public static let query: UInt8 = 0x00, answer: UInt8 = 0x01
        /// Host to Logic Control: the serial number and the challenge's response.
        public static let reply: UInt8 = 0x02
        /// Logic Control to host: connection confirmed; or denied.
        public static let confirmed: UInt8 = 0x03, denied: UInt8 = 0x04
        /// Host to surface: the version request Ardour sends once a Logic Control confirms.
        public static let versionRequest: UInt8 = 0x13
    }

    /// The jog wheel's controller (channel 1), relative like the V-pots.
    public static let jogController: UInt8 = 0x3C

    // MARK: - Handshake

    /// Reads a SysEx message from a surface (`F0 00 00 66 device command … F7`): a
    /// ``MackieMessage/handshake(device:command:serial:challenge:)``, or nil for anything
    /// else (other makers, unknown devices, truncated). The serial number (seven bytes) and
    /// the challenge (four) are read when the message is long enough to hold them. Any
    /// thread (the audio thread's MIDI input included): no allocation.
    public static func decode(sysex bytes: UnsafeBufferPointer<UInt8>) -> MackieMessage? {
        let n = bytes.count
        guard n >= 7, bytes[0] == 0xF0, bytes[1] == 0, bytes[2] == 0, bytes[3] == 0x66, bytes[n - 1] == 0xF7,
              Device.isKnown(bytes[4]) else { return nil }
        var serial: UInt64 = 0, challenge: UInt32 = 0
        if n >= 14 { for i in 6..<13 { serial = serial << 8 | UInt64(bytes[i] & 0x7F) } }
        if n >= 18 { for i in 13..<17 { challenge = challenge << 8 | UInt32(bytes[i] & 0x7F) } }
        return .handshake(device: bytes[4], command: bytes[5] & 0x7F, serial: serial, challenge: challenge)
    }

    /// The same for a message in an array (tests, the control side).
    public static func decode(sysex bytes: [UInt8]) -> MackieMessage? {
        bytes.withUnsafeBufferPointer { decode(sysex: $0) }
    }

    /// A SysEx message to `device`: the header, `body`, `F7`.
    public static func sysex(device: UInt8, _ body: [UInt8]) -> [UInt8] {
        [0xF0, 0x00, 0x00, 0x66, device] + body.map { $0 & 0x7F } + [0xF7]
    }

    /// The device query (`F0 00 00 66 14 00 F7` for a Mackie Control), which wakes a surface
    /// and has it answer with its serial number (Ardour's `say_hello`).
    public static func deviceQuery(device: UInt8) -> [UInt8] { sysex(device: device, [Handshake.query]) }

    /// What the host sends a surface first, as Ardour's `say_hello` does: the device query to
    /// a Mackie Control, an XT, a Logic Control and a Logic Control XT (whichever is there
    /// answers).
    public static var greeting: [[UInt8]] { [Device.mcu, Device.xt, Device.logic, Device.logicXT].map(deviceQuery) }

    /// The response to a Logic Control's four-byte connection challenge, computed as Ardour's
    /// `calculate_challenge_response` does (from Logic's documentation), in C's `int`
    /// arithmetic. Ardour's `l[2] >> l[3]` shifts by up to 127, which C leaves undefined;
    /// x86-64 and AArch64 take a 32-bit shift count modulo 32, and so does this.
    public static func challengeResponse(_ challenge: UInt32) -> [UInt8] {
        let l = (0..<4).map { Int32((challenge >> (24 - 8 * UInt32($0))) & 0x7F) }
        let r0 = l[0] &+ (l[1] ^ 0x0A) &- l[3]
        let r1 = (l[2] >> (l[3] & 31)) ^ (l[0] &+ l[3])
        let r2 = (l[3] &- (l[2] << 2)) ^ (l[0] | l[1])
        let r3 = l[1] &- l[2] &+ (0xF0 ^ (l[3] << 4))
        return [r0, r1, r2, r3].map { UInt8($0 & 0x7F) }
    }

    /// The host's answer to a Logic Control's challenge: `F0 00 00 66 10 02`, its serial
    /// number back, the response, `F7`.
    public static func connectionReply(device: UInt8, serial: UInt64, challenge: UInt32) -> [UInt8] {
        let serialBytes = (0..<7).map { UInt8((serial >> (48 - 8 * UInt64($0))) & 0x7F) }
        return sysex(device: device, [Handshake.reply] + serialBytes + challengeResponse(challenge))
    }

    /// The version request Ardour sends when a Logic Control confirms the connection.
    public static func versionRequest(device: UInt8) -> [UInt8] { sysex(device: device, [Handshake.versionRequest, 0x00]) }

    // MARK: - Meters

    /// How far a strip's meter swings for a peak of `decibels`, in percent (115 at +6 dB and
    /// above; over 100 is an overload): Ardour's `calculate_meter_over_and_deflection`.
    public static func meterDeflection(decibels db: Double) -> Double {
        switch db {
        case ..<(-70): 0
        case ..<(-60): (db + 70) * 0.25
        case ..<(-50): (db + 60) * 0.5 + 2.5
        case ..<(-40): (db + 50) * 0.75 + 7.5
        case ..<(-30): (db + 40) * 1.5 + 15
        case ..<(-20): (db + 30) * 2 + 30
        case ..<6: (db + 20) * 2.5 + 50
        default: db.isNaN ? 0 : 115
        }
    }

    /// The channel-pressure message setting strip `strip`'s (0–7) meter to a peak of
    /// `decibels`: `D0`, the strip in the high nibble and one of 13 segments in the low
    /// (Ardour's `Meter::send_update`).
    public static func meterMessage(strip: Int, decibels: Double) -> [UInt8] {
        let segment = Int((meterDeflection(decibels: decibels) / 115 * 13).rounded(.toNearestOrEven))
        return [0xD0, UInt8(min(max(strip, 0), 7) << 4 | min(max(segment, 0), 13))]
    }

    /// The channel-pressure message lighting (`on`) or clearing strip `strip`'s overload LED.
    public static func overloadMessage(strip: Int, on: Bool) -> [UInt8] {
        [0xD0, UInt8(min(max(strip, 0), 7) << 4 | (on ? 0x0E : 0x0F))]
    }

    /// SysEx enabling (level meter on the LCD, peak hold, signal LED) or disabling strip
    /// `strip`'s meter: Ardour enables them while the transport rolls.
    public static func meterModeMessage(device: UInt8, strip: Int, enabled: Bool) -> [UInt8] {
        sysex(device: device, [0x20, UInt8(min(max(strip, 0), 7)), enabled ? 0x07 : 0x00])
    }

    // MARK: - The assignment display

    /// The two 7-segment characters of the assignment display: `text`'s first character on
    /// CC 0x4B, its second on CC 0x4A (as Ardour's `show_two_char_display` writes them), a
    /// dot lit after each where `dots` has a `.`.
    public static func assignmentMessages(_ text: String, dots: String = "  ") -> [[UInt8]] {
        let t = Array(text.padding(toLength: 2, withPad: " ", startingAt: 0)), d = Array(dots.padding(toLength: 2, withPad: " ", startingAt: 0))
        return [[0xB0, 0x4B, segmentCode(t[0], dot: d[0] == ".")], [0xB0, 0x4A, segmentCode(t[1], dot: d[1] == ".")]]
    }

    /// The ten digits the time display shows for `frame` in bars and beats, as Ardour's
    /// `format_bbt_timecode` lays them out: bar (three digits), beat (two), a blank, then
    /// Ardour's 1920-tick beat (four digits), from the tempo map's ticks.
    public static func bbtDigits(bar: Int, beat: Int, tick: Int, ticksPerBeat: Int) -> String {
        let ardourTicks = ticksPerBeat > 0 ? tick * 1920 / ticksPerBeat : 0
        func pad(_ v: Int, _ n: Int) -> String {
            let t = String(min(max(v, 0), Int(pow(10, Double(n))) - 1))
            return String(repeating: "0", count: max(0, n - t.count)) + t
        }
        return pad(bar, 3) + pad(beat, 2) + " " + pad(ardourTicks / 1000, 1) + pad(ardourTicks % 1000, 3)
    }
}
