import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// Tapedeck as a JACK client on a private `jackd -d dummy`: its ports, the audio through
/// them against JACK's clock, and what happens when the server changes or goes away.
final class JACKDeviceTests: XCTestCase {
    /// A saved session: track 1 plays a 440 Hz cosine (0.5) from `toneAt` for two seconds,
    /// track 2 ("Vocal") is armed on input 1.
    private func session(in dir: String, toneAt: Int64) throws -> (Session, SessionFolder) {
        let tone = (0..<96000).map { Float(0.5 * cos(2 * Double.pi * 440 * Double($0) / 48000)) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [tone])
        session.tracks[0].name = "Tone"
        session.tracks[0].regions[0].timelineStartFrame = toneAt
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        return (session, folder)
    }

    func testPortsAreNamedAfterTracksAndConnectToThePhysicalPorts() throws {
        _ = try JackFixture.start(self)
        let device = try JackTools.device(inputs: 3, outputs: 2, tracks: [("Vocal", [1]), ("Keys", [2, 3])], connection: .physical)
        defer { device.stop() }
        XCTAssertEqual(device.portNames, ["tapedeck:Vocal_in", "tapedeck:Keys_in_L", "tapedeck:Keys_in_R", "tapedeck:out_L", "tapedeck:out_R"])
        let listing = JackTools.run(["/usr/bin/jack_lsp", "-c"])
        for port in device.portNames { XCTAssertTrue(listing.contains(port), "jack_lsp lists \(port):\n\(listing)") }
        // jack_lsp -c: a port, then the ports connected to it, indented.
        XCTAssertTrue(listing.contains("tapedeck:out_L\n   system:playback_1"), listing)
        XCTAssertTrue(listing.contains("tapedeck:Vocal_in\n   system:capture_1"), listing)
        XCTAssertTrue(listing.contains("tapedeck:Keys_in_L\n   system:capture_2"), listing)
        XCTAssertEqual(device.configuration.captureChannels, 3)
        XCTAssertEqual(device.configuration.periodFrames, 256, "the server's buffer size")
        // The dummy server reports 256 frames of capture and 512 of playback latency — once
        // JACK has passed them on to the new ports, on its own thread (a moment on a busy
        // machine); what places takes is what the device says now.
        let settled = Date().addingTimeInterval(3)
        while device.currentRoundTripLatencyFrames != 768 && Date() < settled { usleep(10_000) }
        XCTAssertEqual(device.currentRoundTripLatencyFrames, 768)
        device.stop()
        XCTAssertFalse(JackTools.run(["/usr/bin/jack_lsp"]).contains("tapedeck:"), "stopping the device removes its ports")
    }

    func testAPatternConnectsToMatchingPortsAndNoneMatchingIsSaidOnce() throws {
        _ = try JackFixture.start(self)
        let probe = try JackProbe(name: "probe", inputs: 2, outputs: 1)
        let device = try JackTools.device(inputs: 1, outputs: 2, connection: .pattern("^probe:"))
        defer { device.stop() }
        let listing = JackTools.run(["/usr/bin/jack_lsp", "-c"])
        XCTAssertTrue(listing.contains("tapedeck:in_1\n   probe:out_1"), listing)
        XCTAssertTrue(listing.contains("tapedeck:out_L\n   probe:in_1"), listing)
        XCTAssertTrue(listing.contains("tapedeck:out_R\n   probe:in_2"), listing)
        XCTAssertEqual(device.drainNotices(), [])
        withExtendedLifetime(probe) {}

        let lonely = try JackTools.device(outputs: 2, connection: .pattern("^nothing-here:"), client: "lonely")
        defer { lonely.stop() }
        XCTAssertEqual(lonely.drainNotices(), ["--connect '^nothing-here:': no JACK port matches (see jack_lsp); the ports are left unconnected"])
        XCTAssertEqual(lonely.drainNotices(), [], "said once")
    }

    func testARateOtherThanTheSessionsAndAMissingServerAreOneClearLineEach() throws {
        _ = try JackFixture.start(self)
        XCTAssertThrowsError(try JackTools.device(sampleRate: 44100)) { error in
            XCTAssertEqual("\(error)", "audio device 'jack': the JACK server runs at 48000 Hz but the session is 44100 Hz: start JACK at 44100 Hz (jackd -r 44100 …) or use a session at 48000 Hz")
        }
        let running = String(cString: getenv("JACK_DEFAULT_SERVER"))
        setenv("JACK_DEFAULT_SERVER", "no-such-server-\(getpid())", 1)
        defer { setenv("JACK_DEFAULT_SERVER", running, 1) }
        XCTAssertFalse(JACKDevice.serverIsRunning())
        XCTAssertThrowsError(try JackTools.device()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.hasPrefix("audio device 'jack': no JACK server is running 'no-such-server-"), text)
            XCTAssertFalse(text.contains("\n"), "one line")
        }
    }

    /// Another program plays a 1 kHz tone into `tapedeck:Vocal_in` from JACK frame 72000; a
    /// take recorded from frame 24000 has it at exactly 48000 frames in. Meanwhile Tapedeck
    /// plays a tone that starts at timeline frame 48000, and a listener hears it start at
    /// JACK frame 48000: one clock, to the frame, both ways.
    func testAudioThroughJackPortsLinesUpWithJacksTransportToTheFrame() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try session(in: dir, toneAt: 48000)
        let device = try JackTools.device(inputs: 1, outputs: 2, tracks: [("Vocal", [1])])
        let source = try JackProbe(name: "source", outputs: 1, toneHz: 1000, amplitude: 0.25, onset: 72000)
        let listener = try JackProbe(name: "listener", inputs: 1)
        source.connect("source:out_1", "tapedeck:Vocal_in")
        listener.connect("tapedeck:out_L", "listener:in_1")
        let transport = try Transport(session: session, folder: folder, device: device)
        defer { transport.close() }
        try transport.record(RecordRequest(fromFrame: 24000))
        TransportFixture.waitFor(transport) { $0.positionFrame > 120_000 }
        transport.stop()
        TransportFixture.waitFor(transport) { $0.state == .stopped }
        let takes = transport.collectFinishedTakes()
        XCTAssertEqual(takes.count, 1)
        guard let take = takes.first else { return }
        XCTAssertEqual(take.region.timelineStartFrame, 24000, "JACK reports no latency between two programs")
        let recorded = try JackTools.firstChannel(folder.absolutePath(of: take.region.file))
        XCTAssertEqual(JackTools.onset(recorded), 48000, "the tone begins at JACK frame 72000 = 48000 frames into a take from 24000")
        // Every sample from there is the source's tone at its JACK frame — but where JACK's
        // clock skipped frames nobody heard (an xrun on a busy machine, counted with what it
        // cost), which are silence; and beside an xrun, where neither client can tell its
        // cycle's frame within a period (see JACKClockGaps), a period may be off.
        let xruns = transport.events.filter { $0.kind == .deviceXrun }
        let lost = xruns.reduce(Int64(0)) { $0 + $1.frames }
        var silent = 0, wrong = 0
        for k in 48000..<min(recorded.count, 72000) {
            let want = Float(0.25 * cos(2 * Double.pi * 1000 * Double(k - 48000) / 48000))
            if abs(recorded[k] - want) < 1e-3 { continue }
            if recorded[k] == 0 { silent += 1 } else { wrong += 1 }
        }
        XCTAssertLessThanOrEqual(Int64(silent), lost, "silence only for frames JACK lost: \(xruns)")
        XCTAssertLessThanOrEqual(wrong, 2 * 256 * xruns.count, "no sample off its JACK frame but beside an xrun: \(xruns)")

        let heard = listener.heard()
        guard let first = JackTools.onset(heard.samples, threshold: 0.1) else { return XCTFail("the listener heard no tone") }
        XCTAssertEqual(heard.frames[first], 48000, "Tapedeck plays timeline frame 48000 at JACK frame 48000")
        // A mono track at centre: −3 dB on each side.
        XCTAssertEqual(Double(heard.samples[first]), 0.5 * 0.7071, accuracy: 0.002)
        let tone = heard.samples[first..<min(heard.samples.count, first + 24000)]
        XCTAssertEqual(JackTools.frequency(tone), 440, accuracy: 2)
    }
}
