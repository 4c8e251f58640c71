import XCTest
@testable import TapedeckCore

/// The Mackie Control protocol without I/O: the fader's curve, reading what a surface sends
/// (malformed messages included) and writing what it shows.
final class MackieControlTests: XCTestCase {
    func testTheFaderCurveRoundTripsThroughFourteenBits() {
        // 0 dB sits at about three quarters of the travel (Ardour's curve: 0.78).
        XCTAssertEqual(MackieControl.position(decibels: 0), 0.7817, accuracy: 0.001)
        XCTAssertEqual(MackieControl.faderValue(decibels: 0), 12808)
        XCTAssertEqual(MackieControl.decibels(faderValue: 12808), 0)
        XCTAssertEqual(MackieControl.decibels(faderValue: MackieControl.faderValue(decibels: -6)), -6)
        XCTAssertEqual(MackieControl.decibels(faderValue: MackieControl.faderValue(decibels: -20.5)), -20.5)
        // −∞ is the bottom, and the bottom is −∞ (so is anything under the screen's floor).
        XCTAssertEqual(MackieControl.faderValue(decibels: Fader.silentDecibels), 0)
        XCTAssertEqual(MackieControl.faderValue(decibels: -.infinity), 0)
        XCTAssertEqual(MackieControl.decibels(faderValue: 0), Fader.silentDecibels)
        XCTAssertEqual(MackieControl.decibels(faderValue: 100), Fader.silentDecibels)
        // Full scale is +6 dB; the screen's +12 dB pins the motor at the top.
        XCTAssertEqual(MackieControl.decibels(faderValue: 16383), 6)
        XCTAssertEqual(MackieControl.faderValue(decibels: 12), 16383)
        // Full motor range: a fader pushed to the top reads +6 dB, and +6 dB puts the motor
        // back at the very top (16383), not a hair under it.
        XCTAssertEqual(MackieControl.faderValue(decibels: MackieControl.decibels(faderValue: 16383)), 16383)
        XCTAssertEqual(MackieControl.faderValue(decibels: 6), 16383)
        XCTAssertLessThan(MackieControl.faderValue(decibels: 5.9), 16383)
        // Every position above 0 dB comes back within half a 0.1 dB step of where the hand
        // left it (a step is about 66 values near the top), the top snapping to 16383.
        for v in stride(from: 12808, through: 16383, by: 13) {
            let back = MackieControl.faderValue(decibels: MackieControl.decibels(faderValue: v))
            XCTAssertEqual(Double(back), Double(v), accuracy: 40, "\(v)")
        }
        XCTAssertEqual(MackieControl.faderValue(decibels: .nan), 0)
        XCTAssertEqual(MackieControl.decibels(faderValue: 99999), 6, "clamped, never a trap")
        XCTAssertEqual(MackieControl.decibels(faderValue: -5), Fader.silentDecibels)
        // Monotonic over the whole travel.
        var last = -Double.infinity
        for v in stride(from: 0, through: 16383, by: 97) {
            let db = MackieControl.decibels(faderValue: v)
            XCTAssertGreaterThanOrEqual(db, last)
            last = db
        }
    }

    func testFadersTouchesVPotsAndButtonsAreRead() {
        // Fader 1 to 0 dB: pitch-bend on channel 1, LSB first.
        XCTAssertEqual(MackieControl.decode([0xE0, 8, 100]), .fader(strip: 0, position: 12808))
        XCTAssertEqual(MackieControl.decode([0xE8, 0x7F, 0x7F]), .fader(strip: 8, position: 16383), "the master on channel 9")
        XCTAssertEqual(MackieControl.decode([0x90, 0x68, 0x7F]), .touch(strip: 0, touched: true))
        XCTAssertEqual(MackieControl.decode([0x90, 0x70, 0x00]), .touch(strip: 8, touched: false))
        XCTAssertEqual(MackieControl.decode([0x90, 0x10, 0x7F]), .button(note: 0x10, pressed: true))
        XCTAssertEqual(MackieControl.decode([0x80, 0x10, 0x40]), .button(note: 0x10, pressed: false), "a note off is a release")
        // V-pots: bit 6 is the direction, the low bits the detents.
        XCTAssertEqual(MackieControl.decode([0xB0, 0x10, 0x01]), .vpot(strip: 0, steps: 1))
        XCTAssertEqual(MackieControl.decode([0xB0, 0x17, 0x43]), .vpot(strip: 7, steps: -3))
        XCTAssertEqual(MackieControl.decode([0xB0, 0x12, 0x0F]), .vpot(strip: 2, steps: 15))
    }

    func testMalformedAndForeignMessagesAreIgnored() {
        for bytes: [UInt8] in [[], [0xE0], [0xE0, 0x10], [0xF0, 0x00, 0x00, 0x66, 0x14, 0xF7], [0x45, 0x10, 0x10],
                               [0xE9, 0, 0], [0xEF, 0x7F, 0x7F], [0x91, 0x10, 0x7F], [0xB0, 0x18, 0x01], [0xB0, 0x10, 0x00],
                               [0xB1, 0x10, 0x01], [0xC0, 0x01, 0x00], [0xFE, 0, 0]] {
            XCTAssertNil(MackieControl.decode(bytes), "\(bytes)")
        }
        // Data bytes with the top bit set are masked, not trusted.
        XCTAssertEqual(MackieControl.decode(status: 0xE0, data1: 0xFF, data2: 0xFF), .fader(strip: 0, position: 16383))
    }

    func testScribbleStripsCutLongNamesAndReplaceWhatTheyCannotShow() {
        XCTAssertEqual(MackieControl.scribbleMessage(strip: 0, line: 0, text: "Lead Vocals"),
                       [0xF0, 0x00, 0x00, 0x66, 0x14, 0x12, 0] + Array("Lead V ".utf8) + [0xF7])
        XCTAssertEqual(MackieControl.scribbleMessage(strip: 2, line: 1, text: "-6.0"),
                       [0xF0, 0x00, 0x00, 0x66, 0x14, 0x12, 56 + 14] + Array("-6.0   ".utf8) + [0xF7])
        // Non-ASCII letters fold to their nearest ASCII, as Ardour's surfaces show them.
        XCTAssertEqual(MackieControl.scribbleMessage(strip: 1, line: 0, text: "Chœur"),
                       [0xF0, 0x00, 0x00, 0x66, 0x14, 0x12, 7] + Array("Choeur ".utf8) + [0xF7])
        XCTAssertEqual(MackieControl.displayText("üŋ", length: 6), Array("un    ".utf8))
        XCTAssertEqual(MackieControl.displayText("Åsa Ørn", length: 6), Array("Asa Or".utf8))
        XCTAssertEqual(MackieControl.displayText("Straße", length: 7), Array("Strasse".utf8))
        XCTAssertEqual(MackieControl.displayText("Москва", length: 6), Array("Moskva".utf8))
        XCTAssertEqual(MackieControl.displayText("naïve", length: 6), Array("naive ".utf8))
        let odd = MackieControl.scribbleMessage(strip: 7, line: 0, text: "🎤\u{7}\u{1B}[2Jé")
        XCTAssertEqual(odd.count, 15)
        XCTAssertEqual(Array(odd[7..<14]), Array("???[2J ".utf8), "control characters and emoji are each a ?")
        XCTAssertTrue(odd.dropFirst().dropLast().allSatisfy { $0 < 0x80 }, "SysEx data bytes stay 7-bit")
        XCTAssertEqual(MackieControl.scribbleMessage(strip: 99, line: 5, text: "").count, 15, "out of range strips are clamped")
    }

    func testTheTimeDisplayAndTheLEDs() {
        // Ardour's SMPTE layout, `HH MMSS FF`, at the session's rate: 1:23.5 is frame 12 at
        // 25 fps and frame 15 at 30.
        XCTAssertEqual(MackieControl.timecodeDigits(Timecode(frame: 83 * 48000 + 24000, sampleRate: 48000, rate: .fps25)), "00 0123 12")
        XCTAssertEqual(MackieControl.timecodeDigits(Timecode(frame: 83 * 48000 + 24000, sampleRate: 48000, rate: .fps30)), "00 0123 15")
        XCTAssertEqual(MackieControl.timecodeDigits(Timecode(frame: -4, sampleRate: 48000, rate: .fps25)), "00 0000 00")
        // Hundreds of hours keep the frames on the display's ten digits.
        XCTAssertEqual(MackieControl.timecodeDigits(Timecode(hours: 123, minutes: 4, seconds: 5, frames: 6)), "23 0405 06")
        XCTAssertEqual(MackieControl.timecodeDigits(Timecode(frame: .max, sampleRate: 48000, rate: .fps60)).count, 10)
        XCTAssertEqual(MackieControl.timeDigitMessage(index: 0, character: "1"), [0xB0, 0x49, 0x31], "CC 73 is the leftmost digit")
        XCTAssertEqual(MackieControl.timeDigitMessage(index: 9, character: "7", dot: true), [0xB0, 0x40, 0x37 | 0x40])
        XCTAssertEqual(MackieControl.segmentCode("a"), 1)
        XCTAssertEqual(MackieControl.segmentCode(" "), 0x20)
        XCTAssertEqual(MackieControl.ledMessage(note: 0x10, on: true), [0x90, 0x10, 0x7F])
        XCTAssertEqual(MackieControl.ringMessage(strip: 0, pan: 0), [0xB0, 0x30, 6])
        XCTAssertEqual(MackieControl.ringMessage(strip: 3, pan: -1), [0xB0, 0x33, 1])
        XCTAssertEqual(MackieControl.ringMessage(strip: 3, pan: .nan), [0xB0, 0x33, 6])
        XCTAssertEqual(MackieControl.faderMessage(strip: 0, value: 12808), [0xE0, 8, 100])
    }

    func testTheSurfaceGetsEverythingOnceThenOnlyWhatChanged() {
        var state = MackieSurfaceState()
        state.strips[0].name = "Drums"
        let all = state.messages(from: nil)
        // 16 scribble cells, 9 faders, 8 rings, 32 strip LEDs, 4 transport LEDs, Flip's and
        // Scrub's LEDs, SMPTE's and BEATS', 10 digits, 2 assignment characters.
        XCTAssertEqual(all.count, 16 + 9 + 8 + 32 + 4 + 2 + 2 + 10 + 2)
        XCTAssertEqual(state.messages(from: state), [])
        var next = state
        next.strips[0].name = "Kick"
        next.strips[1].fader = 9000
        next.strips[2].mute = true
        XCTAssertEqual(next.messages(from: state), [MackieControl.scribbleMessage(strip: 0, line: 0, text: "Kick"),
                                                    MackieControl.faderMessage(strip: 1, value: 9000),
                                                    MackieControl.ledMessage(note: 0x12, on: true)])
        XCTAssertEqual(next.messages(from: state, holding: [1]).count, 2, "a fader a hand is on gets no motor")
    }

    func testTheHandshakeAsArdourSpeaksIt() {
        // The device query Ardour sends on connect, to each kind of unit.
        XCTAssertEqual(MackieControl.deviceQuery(device: MackieControl.Device.mcu), [0xF0, 0x00, 0x00, 0x66, 0x14, 0x00, 0xF7])
        XCTAssertEqual(MackieControl.greeting, [0x14, 0x15, 0x10, 0x11].map { [0xF0, 0x00, 0x00, 0x66, $0, 0x00, 0xF7] })
        // A Logic Control's challenge: serial 41 42 43 44 45 46 47, challenge 01 02 03 04.
        let serial: [UInt8] = [0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47]
        let challenge: [UInt8] = [0x01, 0x02, 0x03, 0x04]
        let asked = MackieControl.decode(sysex: [0xF0, 0x00, 0x00, 0x66, 0x10, 0x01] + serial + challenge + [0xF7])
        XCTAssertEqual(asked, .handshake(device: 0x10, command: 0x01, serial: 0x41_4243_4445_4647, challenge: 0x0102_0304))
        // The responses below were computed by Ardour's own expression, compiled with g++
        // (calculate_challenge_response, surface.cc), not by this code.
        XCTAssertEqual(MackieControl.challengeResponse(0x0102_0304), [0x05, 0x05, 0x7B, 0x2F])
        XCTAssertEqual(MackieControl.challengeResponse(0x1234_5678), [0x58, 0x0A, 0x16, 0x4E])
        XCTAssertEqual(MackieControl.challengeResponse(0x7F00_7F00), [0x09, 0x00, 0x7B, 0x71])
        XCTAssertEqual(MackieControl.challengeResponse(0x4021_3325), [0x46, 0x64, 0x38, 0x0E], "a shift count past 31, as x86-64 takes it")
        XCTAssertEqual(MackieControl.connectionReply(device: 0x10, serial: 0x41_4243_4445_4647, challenge: 0x0102_0304),
                       [0xF0, 0x00, 0x00, 0x66, 0x10, 0x02] + serial + [0x05, 0x05, 0x7B, 0x2F, 0xF7])
        XCTAssertEqual(MackieControl.versionRequest(device: 0x10), [0xF0, 0x00, 0x00, 0x66, 0x10, 0x13, 0x00, 0xF7])
        XCTAssertEqual(MackieControl.decode(sysex: [0xF0, 0x00, 0x00, 0x66, 0x10, 0x03] + serial + [0xF7]),
                       .handshake(device: 0x10, command: 0x03, serial: 0x41_4243_4445_4647, challenge: 0))
        // Not a handshake: MMC, another maker, an unknown unit, truncated, unterminated.
        for bytes: [UInt8] in [[0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7], [0xF0, 0x00, 0x00, 0x67, 0x14, 0x01, 0xF7],
                               [0xF0, 0x00, 0x00, 0x66, 0x58, 0x01, 0xF7], [0xF0, 0x00, 0x00, 0x66, 0x14, 0xF7],
                               [0xF0, 0x00, 0x00, 0x66, 0x14, 0x01, 0x00], []] {
            XCTAssertNil(MackieControl.decode(sysex: bytes), "\(bytes)")
        }
    }

    func testMetersJogAndTheDisplays() {
        // Ardour's meter: 13 segments over its deflection curve, strip in the high nibble.
        XCTAssertEqual(MackieControl.meterDeflection(decibels: 0), 100)
        XCTAssertEqual(MackieControl.meterDeflection(decibels: -45), 11.25)
        XCTAssertEqual(MackieControl.meterMessage(strip: 0, decibels: -12), [0xD0, 0x08])
        XCTAssertEqual(MackieControl.meterMessage(strip: 3, decibels: -.infinity), [0xD0, 0x30])
        XCTAssertEqual(MackieControl.meterMessage(strip: 7, decibels: 9), [0xD0, 0x7D])
        XCTAssertEqual(MackieControl.meterMessage(strip: 2, decibels: .nan), [0xD0, 0x20])
        XCTAssertEqual(MackieControl.overloadMessage(strip: 1, on: true), [0xD0, 0x1E])
        XCTAssertEqual(MackieControl.meterModeMessage(device: 0x14, strip: 5, enabled: true), [0xF0, 0x00, 0x00, 0x66, 0x14, 0x20, 0x05, 0x07, 0xF7])
        // The jog wheel: CC 0x3C, relative; a zero count is one detent.
        XCTAssertEqual(MackieControl.decode([0xB0, 0x3C, 0x05]), .jog(steps: 5))
        XCTAssertEqual(MackieControl.decode([0xB0, 0x3C, 0x43]), .jog(steps: -3))
        XCTAssertEqual(MackieControl.decode([0xB0, 0x3C, 0x00]), .jog(steps: 1))
        XCTAssertNil(MackieControl.decode([0xB1, 0x3C, 0x01]), "other channels are not the wheel")
        // The assignment display: first character on CC 0x4B, as Ardour writes it.
        XCTAssertEqual(MackieControl.assignmentMessages("Ar", dots: ".."), [[0xB0, 0x4B, 0x41], [0xB0, 0x4A, 0x52]])
        XCTAssertEqual(MackieControl.assignmentMessages("08"), [[0xB0, 0x4B, 0x30], [0xB0, 0x4A, 0x38]])
        // Bars and beats on the time display, in Ardour's layout and 1920-tick beats.
        XCTAssertEqual(MackieControl.bbtDigits(bar: 3, beat: 2, tick: 480, ticksPerBeat: 960), "00302 0960")
        XCTAssertEqual(MackieControl.bbtDigits(bar: 12345, beat: 1, tick: 0, ticksPerBeat: 960), "99901 0000")
        // Flip: the fader on pan, the ring on the level.
        XCTAssertEqual(MackieControl.faderValue(pan: -1), 0)
        XCTAssertEqual(MackieControl.faderValue(pan: 1), 16383)
        XCTAssertEqual(MackieControl.pan(faderValue: 16383), 1)
        XCTAssertEqual(MackieControl.pan(faderValue: 8192), 0, accuracy: 1e-9)
        XCTAssertEqual(MackieControl.levelRingMessage(strip: 2, position: 0.7817), [0xB0, 0x32, 0x20 | 9])
    }
}
