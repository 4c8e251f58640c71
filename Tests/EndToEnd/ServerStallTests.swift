import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// What a stalled server costs a take, and whose transport moves are whose, on jackd2 and on
/// PipeWire's JACK, through the command line as a user meets them.
final class ServerStallTests: XCTestCase {
    static let toneHz = 997.0

    func testAServerStallCostsExactlyWhatItLostOnJackd2() throws { try stall(.jackd2) }

    func testAServerStallCostsExactlyWhatItLostOnPipeWiresJACK() throws { try stall(.pipewire) }

    func testTapedecksOwnStartAndStopAreNeverAnotherProgramsOnJackd2() throws { try ownMoves(.jackd2) }

    func testTapedecksOwnStartAndStopAreNeverAnotherProgramsOnPipeWiresJACK() throws { try ownMoves(.pipewire) }

    /// `record` of a sine played by JACK's frame time (`td-jack-loop --sine`), through a
    /// 200 ms stop of the server with a busy process per core: silence exactly as long as
    /// the xruns the take reported cost (and the cycles the server did not run the sine for,
    /// which it says), and every other sample on its device frame.
    private func stall(_ kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        try server.startLoop("tdsine", delayFrames: 0, sineHz: Self.toneHz)
        let session = dir + "/stall.tapedeck"
        let folder = SessionFolder(path: session)
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try folder.create(s)
        var env = server.environment
        env["XDG_CONFIG_HOME"] = dir + "/config"
        if kind == .jackd2 { env["XDG_RUNTIME_DIR"] = dir }
        let hogs = BusyCores()
        defer { hogs.stop() }
        let out = dir + "/record.out", err = dir + "/record.err"
        let skippedBefore = server.skippedFrames("tdsine")
        let record = try SpawnedChild([Tapedeck.binary, "record", session, "--device", "jack", "--connect", "tdsine:", "--duration", "4",
                                       "--json"], environment: env, stdoutPath: out, stderrPath: err)
        usleep(1_500_000)
        server.stall(milliseconds: 200)
        guard let status = record.wait(timeoutSeconds: 60) else {
            _ = record.kill(SIGKILL)
            return XCTFail("record did not end")
        }
        XCTAssertEqual((status >> 8) & 0xff, 0, (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
        hogs.stop()
        usleep(50_000)  // the sine prints what it was not run for every 10 ms
        // Frames the server did not run the sine for are silence Tapedeck need not have lost
        // (seen on PipeWire's JACK: 512 silent where the take's xruns lost 256).
        let unplayed = server.skippedFrames("tdsine") - skippedBefore
        let lines = ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n")
        let xruns = lines.compactMap { line -> (frame: Int64, lost: Int64)? in
            guard let o = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["event"] as? String == "xrun",
                  let frame = (o["frame"] as? NSNumber)?.int64Value, let lost = (o["lost_frames"] as? NSNumber)?.int64Value else { return nil }
            return (frame, lost)
        }
        let lost = xruns.map(\.lost).reduce(0, +)
        let region = try XCTUnwrap(try folder.load().tracks[0].regions.first, "the take is on its track")
        let samples = try Signals.read(folder.absolutePath(of: region.file)).channels[0]
        let judged = FrameTimeTone.judge(samples, hz: Self.toneHz)
        let said = "\(judged.runs); xruns \(xruns.filter { $0.lost > 0 }); the sine not run for \(unplayed) frames"
        if unplayed == 0 {
            XCTAssertEqual(Int64(judged.silent), lost, "silence is exactly what the xruns cost: \(said)")
        } else {
            // Where both were skipped (a stopped server skips every client) the spans are one.
            XCTAssertGreaterThanOrEqual(Int64(judged.silent), max(lost, unplayed), "silence is what the xruns cost and the sine did not play: \(said)")
            XCTAssertLessThanOrEqual(Int64(judged.silent), lost + unplayed, "silence is what the xruns cost and the sine did not play: \(said)")
        }
        XCTAssertEqual(judged.wrong, 0, "no sample early or late: \(judged.runs)")
        print("server stall on \(kind.rawValue): \(lost) frames lost and silent, \(unplayed) not played by the sine, \(judged.wrong) off their frame")
    }

    /// `record` starts JACK's transport and stops it when its take is done: both moves are
    /// Tapedeck's own, never said to be another program's (PipeWire's JACK stops the transport
    /// behind the playhead; that is the stop settling, not a locate).
    private func ownMoves(_ kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        let session = dir + "/moves.tapedeck"
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try SessionFolder(path: session).create(s)
        var env = server.environment
        env["XDG_CONFIG_HOME"] = dir + "/config"
        if kind == .jackd2 { env["XDG_RUNTIME_DIR"] = dir }
        for trial in 1...3 {
            let r = try Tapedeck.run(["record", session, "--device", "jack", "--connect", "none", "--duration", "1.5", "--json"],
                                     environment: env, timeout: 60)
            XCTAssertEqual(r.status, 0, r.stderr)
            let moves = r.stdout.split(separator: "\n").filter { $0.contains("\"jack_transport\"") }
            XCTAssertTrue(moves.contains { $0.contains("\"started\"") && $0.contains("\"by\":\"tapedeck\"") }, "trial \(trial): \(moves)")
            XCTAssertTrue(moves.contains { $0.contains("\"stopped\"") && $0.contains("\"by\":\"tapedeck\"") }, "trial \(trial): \(moves)")
            XCTAssertFalse(moves.contains { $0.contains("another program") }, "trial \(trial): \(moves)")
        }
    }
}

/// Busy processes at normal priority, one per core, as on a laptop building something.
final class BusyCores {
    private var children: [SpawnedChild] = []

    init() {
        for _ in 0..<max(1, ProcessInfo.processInfo.activeProcessorCount) {
            if let child = try? SpawnedChild(["/bin/sh", "-c", "while :; do :; done"], environment: [:]) { children.append(child) }
        }
    }

    func stop() {
        for child in children { _ = child.kill(SIGKILL) }
        children = []
    }
}

/// Judges a take of `td-jack-loop --sine`: a cosine of `hz` at 0.25 by JACK's frame time.
enum FrameTimeTone {
    /// Samples that are silence (two or more zeros in a row) and samples that are neither
    /// the tone at their frame nor silence; the device frame of the take's first sample is
    /// found from its first stretch of tone. `runs`: where it went wrong, for a message.
    static func judge(_ x: [Float], hz: Double, rate: Int = 48000) -> (silent: Int, wrong: Int, runs: String) {
        guard let first = x.indices.first(where: { x[$0] != 0 && $0 + 64 < x.count }) else { return (x.count, 0, "all silent") }
        // The tone repeats every `rate` frames (hz a whole number, coprime or not): try each start.
        var origin = -1
        for f in 0..<rate {
            var ok = true
            for i in 0..<64 where abs(Double(x[first + i]) - 0.25 * cos(2 * .pi * hz * Double(f + i) / Double(rate))) > 1e-4 {
                ok = false
                break
            }
            if ok {
                origin = f - first
                break
            }
        }
        guard origin != -1 || first == 0 else { return (0, x.count, "no tone found") }
        var silent = 0, wrong = 0
        var runs: [String] = []
        var runStart = -1, runKind = ""
        func close(_ k: Int) { if runStart >= 0, runs.count < 20 { runs.append("\(runStart)+\(k - runStart) \(runKind)") }; runStart = -1; runKind = "" }
        for k in x.indices {
            let want = 0.25 * cos(2 * .pi * hz * Double(origin + k) / Double(rate))
            let zeroRun = x[k] == 0 && ((k > 0 && x[k - 1] == 0) || (k + 1 < x.count && x[k + 1] == 0))
            var kind = ""
            if zeroRun && abs(want) > 1e-5 { silent += 1; kind = "silent" } else if abs(Double(x[k]) - want) >= 1e-4 { wrong += 1; kind = "wrong" }
            if kind != runKind || kind.isEmpty { close(k) }
            if !kind.isEmpty && runStart < 0 { runStart = k; runKind = kind }
        }
        close(x.count)
        return (silent, wrong, runs.joined(separator: ", "))
    }
}
