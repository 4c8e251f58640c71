import XCTest
@testable import TapedeckCore

final class MIDIModelTests: XCTestCase {
    private func on(_ frame: Int64, _ note: UInt8, _ velocity: UInt8 = 100, channel: UInt8 = 0) -> MIDISequence.Event {
        MIDISequence.Event(frame: frame, status: 0x90 | channel, data1: note, data2: velocity)
    }
    private func off(_ frame: Int64, _ note: UInt8, channel: UInt8 = 0) -> MIDISequence.Event {
        MIDISequence.Event(frame: frame, status: 0x80 | channel, data1: note, data2: 0)
    }

    func testNotesPairOnsAndOffsPerChannelAndPitchAndHangingNotesEndAtTheLength() {
        let s = MIDISequence(events: [on(0, 60), on(10, 60, channel: 1), off(50, 60), on(100, 64), off(40, 60, channel: 1)], lengthFrames: 500)
        XCTAssertEqual(s.notes, [
            .init(channel: 0, pitch: 60, velocity: 100, startFrame: 0, endFrame: 50),
            .init(channel: 1, pitch: 60, velocity: 100, startFrame: 10, endFrame: 40),
            .init(channel: 0, pitch: 64, velocity: 100, startFrame: 100, endFrame: 500),
        ])
    }

    func testARepeatedNoteOnTheSameFrameIsReleasedBeforeItStartsAgain() {
        let s = MIDISequence(events: [on(0, 60), on(100, 60), off(100, 60), off(200, 60)])
        XCTAssertEqual(s.events.map(\.frame), [0, 100, 100, 200])
        XCTAssertTrue(s.events[1].isNoteOff, "the off at 100 comes first")
        XCTAssertEqual(s.notes.map(\.endFrame), [100, 200])
    }

    func testClippingCutsNotesAtTheEndAndDropsThoseStartedBeforeTheCut() {
        let cc = MIDISequence.Event(frame: 5, status: 0xB0, data1: 7, data2: 90)
        let s = MIDISequence(events: [cc, on(0, 60), off(300, 60), on(200, 62), off(250, 62), on(400, 64), off(900, 64)], lengthFrames: 1000)
        let c = s.clipped(offset: 100, length: 500)
        XCTAssertEqual(c.lengthFrames, 500)
        XCTAssertEqual(c.events, [
            MIDISequence.Event(frame: 0, status: 0xB0, data1: 7, data2: 90),   // the controller in force is repeated
            on(100, 62), off(150, 62),
            on(300, 64), off(499, 64),                                          // cut at the end
        ], "the note started before the cut (60) is left out, its off too")
    }

    func testANoteStartingOnTheCutsLastFrameIsLeftOutRatherThanLeftHanging() {
        let s = MIDISequence(events: [on(99, 60), off(150, 60)], lengthFrames: 200)
        let c = s.clipped(offset: 0, length: 100)
        XCTAssertEqual(c.events, [], "no note-on without its note-off")
        XCTAssertEqual(c.notes.count, 0)
    }

    func testQuantisePullsNoteOnsTowardsTheGridKeepingLengths() {
        let s = MIDISequence(events: [on(1100, 60), off(1600, 60), on(1940, 62), off(2040, 62)], lengthFrames: 4000)
        let full = s.quantized(gridFrames: 1000, strength: 1)
        XCTAssertEqual(full.notes.map(\.startFrame), [1000, 2000])
        XCTAssertEqual(full.notes.map { $0.endFrame - $0.startFrame }, [500, 100])
        let half = s.quantized(gridFrames: 1000, strength: 0.5)
        XCTAssertEqual(half.notes.map(\.startFrame), [1050, 1970])
        // Measured on the timeline: a region whose file starts at timeline frame 300.
        let shifted = s.quantized(gridFrames: 1000, strength: 1, origin: 300)
        XCTAssertEqual(shifted.notes.map(\.startFrame), [700, 1700])
    }

    func testQuantiseGridsAndStrengthsReadFromText() throws {
        let sig = TimeSignature(beatsPerBar: 4, beatUnit: 4)
        let map = TempoMap(sampleRate: 48000, tempoBPM: 120, timeSignature: sig)
        func frames(_ g: String) throws -> Double { try QuantizeSetting.parse(grid: g, strength: nil, timeSignature: sig).get().gridFrames(map) }
        XCTAssertEqual(try frames("1/16"), 6000, accuracy: 1e-9)
        XCTAssertEqual(try frames("1/8t"), 8000, accuracy: 1e-9)
        XCTAssertEqual(try frames("1/4."), 36000, accuracy: 1e-9)
        XCTAssertEqual(try frames("bar"), 96000, accuracy: 1e-9)
        XCTAssertEqual(try QuantizeSetting.parse(grid: "1/16", strength: "75%", timeSignature: sig).get().strength, 0.75)
        XCTAssertEqual(try QuantizeSetting.parse(grid: "1/16", strength: "0.5", timeSignature: sig).get().strength, 0.5)
        for bad in ["1/0", "x", "1/", "1/1000", "-1/4", "1/7", "3/16", "2/4", "1/128", "1/12", "1/+4", "1/4tt"] {
            XCTAssertThrowsError(try QuantizeSetting.parse(grid: bad, strength: nil, timeSignature: sig).get(), bad) { error in
                XCTAssertTrue("\(error)".contains("1/1, 1/2, 1/4, 1/8, 1/16, 1/32 or 1/64"), "\(error)")
            }
        }
        XCTAssertEqual(try frames("1/1"), 96000, accuracy: 1e-9)
        XCTAssertEqual(try frames("1/64"), 1500, accuracy: 1e-9)
        XCTAssertEqual(try frames("1/64t"), 1000, accuracy: 1e-9)
        XCTAssertEqual(try frames("1/2."), 72000, accuracy: 1e-9)
        for bad in ["0", "150%", "nan", "x"] {
            XCTAssertThrowsError(try QuantizeSetting.parse(grid: "1/8", strength: bad, timeSignature: sig).get(), bad)
        }
    }

    func testMMCMessagesBecomeTransportCommands() {
        let d = MachineControlDecoder()
        XCTAssertEqual(d.command(sysex: [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7]), .play)
        XCTAssertEqual(d.command(sysex: [0xF0, 0x7F, 0x10, 0x06, 0x01, 0xF7]), .stop)
        XCTAssertEqual(d.command(sysex: [0xF0, 0x7F, 0x00, 0x06, 0x06, 0xF7]), .recordStrobe)
        XCTAssertEqual(d.command(sysex: [0xF0, 0x7F, 0x00, 0x06, 0x07, 0xF7]), .recordExit)
        // LOCATE to 00:01:02 and 12 frames at 25 fps (rate code 1 in the hours byte).
        XCTAssertEqual(d.command(sysex: [0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0x01, 0x20, 0x01, 0x02, 0x0C, 0x00, 0xF7]),
                       .locate(microseconds: 62_480_000))
        XCTAssertNil(d.command(sysex: [0xF0, 0x7E, 0x7F, 0x06, 0x02, 0xF7]), "not real-time universal")
        XCTAssertNil(d.command(sysex: [0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0xF7]), "a short locate")
        let only5 = MachineControlDecoder(deviceID: 5)
        XCTAssertNil(only5.command(sysex: [0xF0, 0x7F, 0x06, 0x06, 0x02, 0xF7]), "another device's message")
        XCTAssertEqual(only5.command(sysex: [0xF0, 0x7F, 0x05, 0x06, 0x02, 0xF7]), .play)
    }

    func testSurfaceButtonsAreTransportOnlyForTheirSurface() {
        let mackie = MachineControlDecoder(surface: .mackie)
        XCTAssertTrue(mackie.button(status: 0x90, data1: 94, data2: 127) == (true, .play))
        XCTAssertTrue(mackie.button(status: 0x90, data1: 94, data2: 0) == (true, nil), "a release is a button, no command")
        XCTAssertTrue(mackie.button(status: 0x91, data1: 94, data2: 127) == (false, nil), "channel 2 is music")
        XCTAssertTrue(mackie.button(status: 0x90, data1: 60, data2: 127) == (false, nil))
        let cc = MachineControlDecoder(surface: .cc)
        XCTAssertTrue(cc.button(status: 0xB3, data1: 45, data2: 127) == (true, .recordStrobe))
        XCTAssertTrue(cc.button(status: 0xB0, data1: 7, data2: 127) == (false, nil))
        XCTAssertTrue(MachineControlDecoder().button(status: 0x90, data1: 94, data2: 127) == (false, nil), "off: a note is a note")
    }

    func testControllerValuesMapToFaderPanMuteAndParameters() {
        XCTAssertEqual(MIDIBinding.faderDecibels(controllerValue: 100), 0, accuracy: 1e-9)
        XCTAssertEqual(MIDIBinding.faderDecibels(controllerValue: 50), 40 * log10(0.5), accuracy: 1e-9)
        XCTAssertEqual(MIDIBinding.faderDecibels(controllerValue: 0), Fader.silentDecibels)
        XCTAssertEqual(MIDIBinding.pan(controllerValue: 64), 0)
        XCTAssertEqual(MIDIBinding.pan(controllerValue: 0), -1)
        XCTAssertEqual(MIDIBinding.pan(controllerValue: 127), 1)
        XCTAssertTrue(MIDIBinding.mute(controllerValue: 127))
        XCTAssertFalse(MIDIBinding.mute(controllerValue: 0))
        XCTAssertEqual(MIDIBinding.parameterValue(controllerValue: 127, minimum: 20, maximum: 20000, logarithmic: true), 20000, accuracy: 1e-6)
        XCTAssertEqual(MIDIBinding.parameterValue(controllerValue: 0, minimum: 20, maximum: 20000, logarithmic: true), 20, accuracy: 1e-9)
        XCTAssertEqual(MIDIBinding.parameterValue(controllerValue: 64, minimum: -60, maximum: 0, logarithmic: false), -60 + 60 * 64.0 / 127, accuracy: 1e-9)
        XCTAssertEqual(MIDIBinding.parameterValue(controllerValue: 127, minimum: 0, maximum: 2, logarithmic: false, steps: 3), 2)
    }

    func testBindingsFollowARenamedTrackAndAreValidated() {
        var s = Session()
        s.tracks = [Track(name: "Vocal")]
        s.bind(MIDIBinding(controller: 7, kind: .fader, track: "vocal"))
        s.bind(MIDIBinding(controller: 7, kind: .pan, track: "Vocal"))
        XCTAssertEqual(s.midiBindings.count, 1, "one binding per controller and channel")
        s.renameTrack(0, to: "Lead")
        XCTAssertEqual(s.midiBindings[0].track, "Lead")
        XCTAssertNil(SessionValidator.problem(in: s))
        s.midiBindings.append(MIDIBinding(controller: 300, kind: .master))
        XCTAssertEqual(SessionValidator.problem(in: s)?.hasPrefix("midiBindings[1].controller"), true)
        s.midiBindings[1] = MIDIBinding(controller: 3, kind: .parameter, track: "Lead", node: 0, parameter: "cutoff")
        XCTAssertEqual(SessionValidator.problem(in: s)?.hasPrefix("midiBindings[1].node"), true)
    }

    func testMIDIRegionsAreCheckedAndRefuseWhatOnlyAudioHas() throws {
        var s = Session()
        s.tracks = [Track(name: "Keys", regions: [Region(file: "midi/a.mid", timelineStartFrame: 0, lengthFrames: 1000, isMIDI: true)], isMIDI: true)]
        XCTAssertNil(SessionValidator.problem(in: s))
        let ref = RegionRef(track: 0, region: 0)
        XCTAssertThrowsError(try s.setRegionFades(ref, fadeInFrames: 10, fadeOutFrames: nil))
        XCTAssertThrowsError(try s.stretchRegion(ref, byFactor: 2))
        XCTAssertThrowsError(try s.setRegionGain(ref, decibels: -3))
        try s.moveRegion(ref, toStartFrame: 500)
        XCTAssertEqual(try s.splitRegion(ref, atFrame: 1000), 1, "split works on MIDI as on audio")
        s.tracks[0].regions[0].file = "midi/a.wav"
        XCTAssertEqual(SessionValidator.problem(in: s)?.contains(".mid file"), true)
        s.tracks[0].regions[0].file = "midi/a.mid"
        s.tracks[0].regions[0].rate = 2
        XCTAssertEqual(SessionValidator.problem(in: s)?.contains("rate"), true)
    }

    func testAFrozenTrackRefusesRegionEditsUntilUnfrozen() throws {
        var s = Session()
        s.tracks = [Track(name: "Synth", regions: [Region(file: "midi/a.mid", timelineStartFrame: 0, lengthFrames: 1000, isMIDI: true)])]
        s.tracks[0].frozen = FrozenAudio(file: "audio/freeze.wav", lengthFrames: 48000)
        XCTAssertEqual(s.tracks[0].endFrame, 48000, "the render's tail counts")
        XCTAssertThrowsError(try s.moveRegion(RegionRef(track: 0, region: 0), toStartFrame: 10)) { e in
            XCTAssertTrue("\(e)".contains("frozen"))
        }
        s.tracks[0].frozen = nil
        XCTAssertNoThrow(try s.moveRegion(RegionRef(track: 0, region: 0), toStartFrame: 10))
    }

    func testOldSessionsReadWithoutTheNewFieldsAndNewOnesRoundTrip() throws {
        var s = Session()
        s.tracks = [Track(name: "A"), Track(name: "Keys", regions: [Region(file: "midi/k.mid", timelineStartFrame: 0, lengthFrames: 10, isMIDI: true)], isMIDI: true)]
        s.tracks[1].frozen = FrozenAudio(file: "audio/f.wav", lengthFrames: 99)
        s.midiBindings = [MIDIBinding(controller: 1, channel: 2, kind: .mute, track: "A")]
        let data = try JSONEncoder().encode(s)
        XCTAssertEqual(try JSONDecoder().decode(Session.self, from: data), s)
        let text = String(decoding: data, as: UTF8.self)
        XCTAssertFalse(text.contains("\"midi\":false"), "audio tracks and regions carry no midi field")
        var old = try JSONSerialization.jsonObject(with: data) as! [String: Any]
        old["midiBindings"] = nil
        let back = try JSONDecoder().decode(Session.self, from: try JSONSerialization.data(withJSONObject: old))
        XCTAssertEqual(back.midiBindings, [])
    }
}
