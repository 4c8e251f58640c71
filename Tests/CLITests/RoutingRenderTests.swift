import Foundation
import XCTest

/// What the routing commands make is what renders: `info` reports the delay compensation a
/// latent bus brings, and an export of a session routed only with these commands has its
/// buses in it.
final class RoutingRenderTests: RoutingTestCase {
    func testInfoShowsTheLatencyTotalOfABusWithALookAheadLimiter() throws {
        try addToneTrack("Tone")
        try ok(["bus", session, "add", "Comp"])
        try ok(["send", session, "tone", "comp", "--level", "-6"])
        var text = try ok(["info", session])
        XCTAssertTrue(text.contains("latency   0 frames (0.00 ms) from the timeline to the outputs"), text)

        // The limiter looks 5 ms ahead: 240 frames at 48 kHz, on the bus's path to the master.
        XCTAssertTrue(try ok(["nodes"]).contains("Look-ahead (5 ms)"), "the limiter is the latent built-in node")
        try ok(["chain", session, "comp", "limiter"])
        text = try ok(["info", session])
        XCTAssertTrue(text.contains("latency   240 frames (5.00 ms) from the timeline to the outputs (delay compensation)"), text)
        XCTAssertTrue(text.contains("bus 2 (Comp) output 240 frames (5.00 ms) late"), text)
        var facts = try info()
        let latency = facts["latency"] as? [String: Any] ?? [:]
        XCTAssertEqual(latency["output_frames"] as? Int, 240)
        XCTAssertEqual(latency["output_ms"] as? Double, 5)
        XCTAssertEqual(try strip("Comp")["output_delay_frames"] as? Int, 240)
        XCTAssertEqual(try strip("Tone")["output_delay_frames"] as? Int, 0)

        // A master limiter adds its look-ahead after the bus's.
        try ok(["chain", session, "master", "limiter"])
        facts = try info()
        XCTAssertEqual((facts["latency"] as? [String: Any])?["output_frames"] as? Int, 480)
        // A bus straight to device outputs is lined up with the master's output, not added to it.
        try ok(["track", session, "comp", "--output", "out:3-4"])
        XCTAssertEqual((try info()["latency"] as? [String: Any])?["output_frames"] as? Int, 240)
    }

    func testAnExportHasTheBusInItAndAPreFaderSendKeepsSoundingWithTheFaderDown() throws {
        try addToneTrack("Tone")
        try ok(["bus", session, "add", "Return"])
        // The track's own path is silent: all that can sound is what reaches the bus.
        try ok(["track", session, "tone", "--gain", "-inf"])
        XCTAssertEqual(try exportPeaks(), [nil, nil], "nothing routed yet: silence")

        try ok(["send", session, "tone", "return", "--level", "-6", "--pre"])
        var peaks = try exportPeaks()
        // 0.5 (-6.02 dBFS) sent at -6 dB, a mono source centred into a stereo bus at -3 dB.
        for p in peaks { XCTAssertEqual(p ?? -200, -6.02 - 6 - 3.01, accuracy: 0.1, "the bus sounds: \(peaks)") }

        // Post-fader, the track's fader at -inf closes the send too.
        try ok(["send", session, "tone", "return", "--post"])
        XCTAssertEqual(try exportPeaks(), [nil, nil])
        try ok(["track", session, "tone", "--gain", "0"])
        peaks = try exportPeaks()
        XCTAssertEqual(peaks[0] ?? -200, -6.02 - 3.01 + 20 * log10(1 + pow(10, -6.0 / 20)), accuracy: 0.1,
                       "dry and send add up in phase: \(peaks)")

        // Muting the bus leaves only the dry track; its output to the bus instead goes through it.
        try ok(["track", session, "return", "--mute"])
        XCTAssertEqual(try exportPeaks()[0] ?? -200, -6.02 - 3.01, accuracy: 0.1)
        try ok(["send", session, "tone", "return", "--remove"])
        try ok(["track", session, "tone", "--output", "bus:return"])
        XCTAssertEqual(try exportPeaks(), [nil, nil], "all of the track goes through the muted bus")
        try ok(["track", session, "return", "--unmute", "--gain", "-12"])
        XCTAssertEqual(try exportPeaks()[0] ?? -200, -6.02 - 3.01 - 12, accuracy: 0.1, "the bus's fader")
    }

    func testACueMixOnOutputsThreeAndFourLeavesTheMasterExport() throws {
        try addToneTrack("Tone")
        try ok(["bus", session, "add", "Cue"])
        try ok(["track", session, "cue", "--output", "out:3-4"])
        try ok(["send", session, "tone", "cue", "--pre"])
        try ok(["track", session, "tone", "--gain", "-inf"])
        XCTAssertEqual(try exportPeaks(), [nil, nil], "the cue goes to outputs 3-4, not into the stereo mix")
        XCTAssertTrue(try ok(["info", session]).contains("       output: out:3-4"))
    }

    /// `play` on the unpaced file device, every output channel as floats, one array each.
    private func playOutputs(channels: Int) throws -> [[Float]] {
        let out = path("out-\(UUID().uuidString).raw")
        let r = try CLIRun.run(["play", session, "--device", "filetap:OUT=\(out)", "--device-format", "float"], environment: CLIRun.alsaEnvironment)
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stderr.contains("out \(channels) ch"), "the device opens every routed output: \(r.stderr)")
        let raw = try Data(contentsOf: URL(fileURLWithPath: out))
        let all = raw.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return (0..<channels).map { c in stride(from: c, to: all.count, by: channels).map { all[$0] } }
    }

    func testPlayOpensTheCueOutputsAndTheCueCarriesOnlyItsPreFaderSendsWhateverTheFadersDo() throws {
        try addToneTrack("Tone")
        try ok(["bus", session, "add", "Cue"])
        try ok(["track", session, "cue", "--output", "out:3-4"])
        try ok(["send", session, "tone", "cue", "--pre", "--level", "-6"])
        let up = try playOutputs(channels: 4)
        XCTAssertGreaterThan(up[0].map(abs).max() ?? 0, 0.3, "the track plays on the master")
        let cuePeak = up[2].map(abs).max() ?? 0
        XCTAssertEqual(Double(cuePeak), 0.5 * pow(10, -6.0 / 20) * pow(0.5, 0.5), accuracy: 0.02, "the send, centred, on out 3")
        XCTAssertEqual(up[2], up[3], "a mono source centred: both cue outputs alike")

        // The main fader and mute move nothing in the cue.
        try ok(["track", session, "tone", "--gain", "-inf", "--mute"])
        try ok(["track", session, "master", "--gain", "-20"])
        let down = try playOutputs(channels: 4)
        XCTAssertEqual(down[0].map(abs).max(), 0, "the master is silent")
        XCTAssertEqual(down[2], up[2], "the cue is the same, sample for sample")
        XCTAssertEqual(down[3], up[3])
    }
}
