import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// An OSC strip gain is heard, not only drawn: the screen loops a steady sine on `duplextap`
/// (playback only: its OUT file holds exactly what was played), `oscsend /strip/gain 1 -6`
/// arrives while it plays, and the level in OUT after the change is 6 dB below the level
/// before. The device is not paced (it runs many times faster than real time), so the test
/// never times anything: it notes how far OUT had grown when the message was sent and when
/// the screen showed the new fader, and measures windows well before the one and well after
/// the other (the fader ramps over a period; the device's buffer lags by a few).
final class ScreenOSCHeardTests: XCTestCase {
    private let rate = 48000
    /// Float stereo: 8 bytes a frame.
    private let frameBytes = 8

    override func setUpWithError() throws {
        guard access("/usr/bin/oscsend", X_OK) == 0 else { throw XCTSkip("liblo-tools (oscsend) is not installed: make test-deps") }
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// Waits up to `timeout` seconds for `condition`; fails the test when it never holds.
    private func wait(_ what: String, timeout: Double = 30, file: StaticString = #filePath, line: UInt = #line, _ condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return }
            usleep(20_000)
        }
        XCTFail("timed out waiting for \(what)", file: file, line: line)
    }

    private func oscsend(_ port: Int, _ path: String, _ types: String = "", _ args: String...) {
        let result = try? Tapedeck.run(["127.0.0.1", "\(port)", path] + (types.isEmpty ? [] : [types] + args), executable: "/usr/bin/oscsend")
        XCTAssertEqual(result?.status, 0, "oscsend \(path): \(result?.stderr ?? "did not run")")
    }

    /// The left channel of OUT's frames `range` (float stereo, interleaved).
    private func left(_ path: String, _ range: Range<Int>) throws -> [Float] {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(range.lowerBound * frameBytes))
        let data = try handle.read(upToCount: range.count * frameBytes) ?? Data()
        let all: [Float] = data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        return stride(from: 0, to: all.count - 1, by: 2).map { all[$0] }
    }

    /// The median RMS (dB) of `x`'s 100 ms windows: a window that catches the loop's seam or
    /// a stray period does not move it.
    private func level(_ x: [Float]) -> Double {
        let window = rate / 10 // 100 cycles of 1 kHz
        let levels = stride(from: 0, to: x.count - window + 1, by: window).map { 20 * log10(Signals.rms(x, $0..<($0 + window))) }.sorted()
        XCTAssertGreaterThan(levels.count, 5, "enough windows to measure")
        return levels.isEmpty ? -.infinity : levels[levels.count / 2]
    }

    func testAStripGainOfMinusSixDecibelsOverOSCIsHeardSixDecibelsDown() throws {
        let folder = try Tapedeck.temporaryFolder(self).path
        try FileManager.default.createDirectory(atPath: folder + "/config/tapedeck", withIntermediateDirectories: true)
        // 4 s of 1 kHz: a whole number of cycles, so the loop over it has no seam to hear.
        try Signals.write([Signals.sine(hertz: 1000, amplitude: 0.5, frames: 4 * rate)], to: folder + "/sine.wav")
        let session = folder + "/s.tapedeck"
        for args in [["new", folder + "/s"], ["import", session, folder + "/sine.wav"], ["loop", session, "0:00-0:04", "--on"]] {
            let r = try Tapedeck.run(args)
            XCTAssertEqual(r.status, 0, "\(args.first!): \(r.stderr)")
        }
        let port = ScreenOSCTests.freePort()
        let out = folder + "/out.raw"
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "duplextap:OUT=\(out)", "--osc", "\(port)"],
                                    environment: RecordSupport.environment)
        screen.waitFor("the sine stopped with the loop on", timeout: 20) { $0.contains("STOPPED") && $0.contains("LOOP on") }

        let started = size(out)
        oscsend(port, "/transport_play")
        screen.waitFor("PLAYING", timeout: 20)
        // Two seconds of the sine at 0 dB at least, then the fader moves.
        wait("2 s played") { self.size(out) - started >= 2 * self.rate * self.frameBytes }
        let sent = size(out) / frameBytes
        oscsend(port, "/strip/gain", "if", "1", "-6.0")
        screen.waitFor("the fader at -6 dB", timeout: 20) { text in
            text.split(separator: "\n").contains { $0.contains("sine") && $0.contains("-6.0dB") }
        }
        let shown = size(out) / frameBytes
        // Two seconds more after the new fader was drawn, then stop.
        wait("2 s played at -6 dB") { self.size(out) / self.frameBytes - shown >= 2 * self.rate }
        oscsend(port, "/transport_stop")
        screen.waitFor("STOPPED", timeout: 20)

        // Well clear of the change: ending 0.25 s before the message was sent, starting 0.5 s
        // after the screen showed it (the ramp and the device's buffer are a few periods).
        let before = level(try left(out, (sent - 3 * rate / 2)..<(sent - rate / 4)))
        let after = level(try left(out, (shown + rate / 2)..<(shown + 7 * rate / 4)))
        XCTAssertGreaterThan(before, -20, "the sine is heard before the change (\(before) dB)")
        XCTAssertEqual(after - before, -6.0, accuracy: 0.2, "before \(before) dB, after \(after) dB")
    }
}
