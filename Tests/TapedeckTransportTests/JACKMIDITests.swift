import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// MIDI on the JACK backend's own ports, on a private `jackd -d dummy`: a test client sends
/// notes at JACK frame times it chooses to `tapedeck:midi_in`; another hears
/// `tapedeck:out_L` and `tapedeck:midi_out` (thru), each sample and message with its JACK
/// frame time. Tapedeck's armed MIDI track plays a one-frame click through the sampler.
final class JACKMIDITests: XCTestCase {
    /// A session with one armed MIDI track playing a one-shot click (full scale at its first
    /// frame) at the root note.
    private func clickSession(_ dir: String) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/k")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        try FileManager.default.createDirectory(atPath: folder.samplesFolder, withIntermediateDirectories: true)
        var click = [Float](repeating: 0, count: 4800)
        click[0] = 1
        try TransportFixture.write(click, to: folder.samplesFolder + "/click.wav")
        session.tracks = [Track(name: "Keys", armed: true, playbackChain: "sampler:file=samples/click.wav:mode=oneshot", isMIDI: true)]
        try folder.save(session)
        return (session, folder)
    }

    /// The JACK frame time of the first sample louder than 0.3 at or after JACK frame `from`.
    private func onset(_ ears: JackProbe, from: Int64) -> Int64? {
        let heard = ears.heard().samples, clock = ears.clock()
        return zip(heard, clock).first { $0.1 >= from && abs($0.0) > 0.3 }?.1
    }

    /// Waits until the client has heard JACK frame `frame`.
    private func waitUntilHeard(_ ears: JackProbe, frame: Int64) {
        let deadline = Date().addingTimeInterval(20)
        while (ears.clock().last ?? 0) < frame && Date() < deadline { usleep(20_000) }
    }

    func testANoteSentAtAFrameIsHeardThroughTheSamplerAtThatFrameAndGoesOnAsThruThere() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try clickSession(dir)
        let keys = try JackProbe(name: "keys")
        let ears = try JackProbe(name: "ears", inputs: 1)
        let device = try JackTools.device(outputs: 2, sync: false, midi: true)
        XCTAssertEqual(device.midiPortNames, ["tapedeck:midi_in", "tapedeck:midi_out"])
        let transport = try Transport(session: session, folder: folder, device: device)
        defer { transport.close() }
        XCTAssertTrue(transport.midiInputLine.contains("tapedeck:midi_in, tapedeck:midi_out"), transport.midiInputLine)
        keys.connect("keys:midi_out", "tapedeck:midi_in")
        ears.connect("tapedeck:out_L", "ears:in_1")
        ears.connect("tapedeck:midi_out", "ears:midi_in")

        // One note per buffer size: as the engine was built (one block a cycle), then a JACK
        // buffer four times larger (each cycle rendered as four blocks: the note lands in
        // whichever block holds its frame).
        var checked: [(sent: Int64, heard: Int64, thru: Int64)] = []
        for (k, bufferFrames) in [256, 1024].enumerated() {
            if k > 0 {
                JackTools.run(["/usr/bin/jack_bufsize", "\(bufferFrames)"])
                usleep(300_000)
            }
            // Not on a period boundary, so a note placed at its block's start would show.
            let at = keys.now + 24_000 + 101
            keys.send(at: at, [0x90, 60, 127])
            keys.send(at: at + 2400, [0x80, 60, 0])
            waitUntilHeard(ears, frame: at + 12_000)
            let heard = try XCTUnwrap(onset(ears, from: at - 12_000), "the click was heard (buffer \(bufferFrames))")
            let thru = try XCTUnwrap(ears.midiHeard().first { $0.status == 0x90 && $0.frame >= at - 12_000 }, "thru arrived")
            XCTAssertEqual(thru.data1, 60)
            XCTAssertEqual(thru.data2, 127)
            XCTAssertEqual(Double(heard), Double(at), accuracy: Double(bufferFrames),
                           "heard at the frame it was sent, within one period (buffer \(bufferFrames))")
            // JACK MIDI arrives with the cycle it belongs to, so the engine has no reason to move
            // it at all: the click and the thru message fall on the very frame (the dummy
            // server's frame times do not depend on how loaded the machine is).
            XCTAssertEqual(heard, at, "heard on the frame it was sent (buffer \(bufferFrames))")
            XCTAssertEqual(thru.frame, at, "thru on the frame it was sent (buffer \(bufferFrames))")
            XCTAssertTrue(ears.midiHeard().contains { $0.status == 0x80 && $0.frame >= at }, "the note off went on too")
            checked.append((at, heard, thru.frame))
        }
        print("JACK MIDI: sent, heard through the sampler, thru (JACK frame times):", checked)
    }

    func testMIDIPortsTheUserNamesAreConnectedAndAMistakeIsOneLine() throws {
        _ = try JackFixture.start(self)
        let keys = try JackProbe(name: "keys2")
        let request = { (source: String) in
            JACKRequest(deviceName: "jack", clientName: "tapedeck",
                        ports: JACKPortLayout.named(inputs: 0, outputs: 2, tracks: [], midi: true), connection: .none,
                        sampleRate: 48000, transportSync: false, midiSources: [source], midiDestinations: ["keys2:midi_in"])
        }
        do {
            let device = try JACKDevice(request: request("keys2:midi_out"))
            let listing = JackTools.run(["/usr/bin/jack_lsp", "-c"])
            XCTAssertTrue(listing.contains("tapedeck:midi_in\n   keys2:midi_out"), listing)
            XCTAssertTrue(listing.contains("tapedeck:midi_out\n   keys2:midi_in"), listing)
            device.stop()
        }
        XCTAssertThrowsError(try JACKDevice(request: request("nobody:out"))) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("cannot connect the JACK MIDI port nobody:out to tapedeck:midi_in"), text)
            XCTAssertTrue(text.contains("keys2:midi_out"), "names the MIDI ports there are: \(text)")
            XCTAssertFalse(text.contains("\n"), text)
        }
        _ = keys
    }

    /// The device's MIDI ports are connected as it opens, the engine attached only once its
    /// first graph is built (seconds on a busy machine): a Mackie's play pressed in between,
    /// and its fast forward after it, are kept for the engine and handed to the front-end when
    /// it starts, in order (the front-end then does them: ScreenMachineControlTests).
    /// (A surface pressed as the screen opened was lost: seen by hand under load, 3 of 3.)
    func testWhatASurfaceSendsBeforeTheEngineStartsIsHandedOverWhenItStarts() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try TransportFixture.session(in: dir, signals: [[Float](repeating: 0.1, count: 10 * 48000)])
        let surface = try JackProbe(name: "surface")
        let device = try JackTools.device(outputs: 2, sync: false, midi: true)
        surface.connect("surface:midi_out", "tapedeck:midi_in")
        // Play pressed and released, then fast forward twice (a bar each), all before any engine.
        let at = surface.now + 2048
        for (k, note) in [0x5E, 0x5C, 0x5C].enumerated() {
            surface.send(at: at + Int64(k) * 256, [0x90, UInt8(note), 0x7F])
            surface.send(at: at + Int64(k) * 256 + 10, [0x90, UInt8(note), 0x00])
        }
        let deadline = Date().addingTimeInterval(5)
        while surface.now < at + 4096 && Date() < deadline { usleep(10_000) }
        XCTAssertGreaterThanOrEqual(surface.now, at + 4096, "the server ran past the messages")
        var options = TransportOptions()
        options.midi.surface = .mcu
        let transport = try Transport(session: session, folder: folder, device: device, options: options)
        defer { transport.close() }
        // The transport hands them to its front-end (which answers them as `tapedeck ctl`'s
        // commands: ScreenMachineControlTests), all of them, in order, once the engine starts.
        let requests = TransportFixture.machineRequests(transport, count: 3)
        XCTAssertEqual(requests.map(\.command), [.play, .fastForward, .fastForward], "the presses before the engine started")
    }
}
