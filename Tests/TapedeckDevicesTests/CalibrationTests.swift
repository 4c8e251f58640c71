import Foundation
import XCTest
import TapedeckEngine
import TapedeckDevices

final class CalibrationTests: XCTestCase {
    /// The library's loopback (this test target has an older one of the same name).
    private typealias Loop = TapedeckDevices.LoopbackDevice

    func testCalibrationAgainstALoopbackDeviceWithAKnownDelayFindsThatDelayToTheFrame() throws {
        let cases: [(period: Int, delay: Int)] = [(64, 64), (256, 3 * 256 + 17), (1000, 2048), (128, 4801), (32, 23_999), (441, 1234)]
        for (period, delay) in cases {
            let device = Loop(periodFrames: period, periodCount: 2, delayFrames: delay)
            // What a driver reports: one buffer. The rest is the converters' share.
            let reported = Int64(period * 2)
            let shifted = Loop(periodFrames: period, periodCount: 2, delayFrames: delay, reportedLatencyFrames: Int(reported))
            let exact = try LatencyCalibrator.measure(device: device)
            XCTAssertEqual(exact.measuredFrames, Int64(delay), "period \(period), delay \(delay)")
            XCTAssertEqual(exact.extraFrames, 0, "a device that reports its delay truly needs no offset")
            let r = try LatencyCalibrator.measure(device: shifted)
            XCTAssertEqual(r.measuredFrames, Int64(delay), "period \(period), delay \(delay)")
            XCTAssertEqual(r.reportedFrames, reported)
            XCTAssertEqual(r.extraFrames, Int64(delay) - reported)
            XCTAssertEqual(r.spreadFrames, 0)
            XCTAssertEqual(Double(r.level), 0.5, accuracy: 1e-6)
            XCTAssertEqual(r.clickCount, 8)
        }
    }

    func testAQuietPolarityInvertedLoopIsStillFoundToTheFrame() throws {
        let device = Loop(sampleRate: 44100, periodFrames: 128, delayFrames: 700, reportedLatencyFrames: 256, gain: -0.02)
        let r = try LatencyCalibrator.measure(device: device)
        XCTAssertEqual(r.measuredFrames, 700)
        XCTAssertEqual(r.extraFrames, 444)
        XCTAssertEqual(Double(r.level), -0.01, accuracy: 1e-6, "0.5 click × −0.02")
    }

    func testAnUnconnectedLoopSaysNoClickCameBack() {
        let device = Loop(periodFrames: 256, delayFrames: 600, gain: 0)
        XCTAssertThrowsError(try LatencyCalibrator.measure(device: device)) { error in
            guard case .noSignal = error as? LatencyCalibrator.Failure else { return XCTFail("\(error)") }
            XCTAssertTrue("\(error)".hasPrefix("no click came back: is the loopback connected?"), "\(error)")
        }
    }

    func testADelayBeyondTheSearchWindowIsNotMistakenForAShorterOne() {
        var settings = LatencyCalibrator.Settings()
        settings.maxLatencySeconds = 0.05
        let device = Loop(periodFrames: 256, delayFrames: 48_000 / 5)
        XCTAssertThrowsError(try LatencyCalibrator.measure(device: device, settings: settings))
    }

    func testNoiseAloneIsNotAClickButClicksInNoiseAreFound() throws {
        let rate = 48000
        let clicks = LatencyCalibrator.clickFrames(sampleRate: rate)
        var seed: UInt64 = 42
        func noise(_ amplitude: Float) -> Float {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return (Float(seed >> 40) / Float(1 << 24) * 2 - 1) * amplitude
        }
        let length = clicks.last! + rate
        let pureNoise = (0..<length).map { _ in noise(0.2) }
        XCTAssertThrowsError(try LatencyCalibrator.analyse(pureNoise, clicks: clicks, maxLag: rate / 2, reported: 0,
                                                           minimumLevel: 0.003)) { error in
            XCTAssertEqual(error as? LatencyCalibrator.Failure, .noSignal(peak: pureNoise.map(abs).max()!))
        }
        var noisy = (0..<length).map { _ in noise(0.02) }
        for c in clicks { noisy[c + 1500] += 0.1 }
        let r = try LatencyCalibrator.analyse(noisy, clicks: clicks, maxLag: rate / 2, reported: 1024, minimumLevel: 0.003)
        XCTAssertEqual(r.measuredFrames, 1500)
        XCTAssertEqual(r.extraFrames, 476)
    }

    func testADeviceWithoutPlaybackOrWithoutTheChannelIsRefused() {
        let captureOnly = Loop(periodFrames: 64, delayFrames: 64)
        var settings = LatencyCalibrator.Settings()
        settings.inputChannel = 2
        XCTAssertThrowsError(try LatencyCalibrator.measure(device: captureOnly, settings: settings)) { error in
            XCTAssertTrue("\(error)".contains("input channel 2 does not exist (the device has 1)"), "\(error)")
        }
    }

    func testTheMeasuredOffsetPlacesAnOverdubToTheFrame() throws {
        // The promise behind the offset: reported round trip + stored extra = true delay.
        let device = Loop(periodFrames: 256, delayFrames: 1111, reportedLatencyFrames: 512)
        let r = try LatencyCalibrator.measure(device: device)
        XCTAssertEqual(device.configuration.roundTripLatencyFrames + r.extraFrames, 1111)
    }

    // MARK: the offsets file

    private func temporaryFile() throws -> String {
        let dir = NSTemporaryDirectory() + "td-latency-\(UUID().uuidString)"
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir + "/deep/tapedeck/latency"
    }

    func testOffsetsSurviveASaveAndLoadAndKeepOtherDevices() throws {
        let path = try temporaryFile()
        XCTAssertEqual(try LatencyOffsets.load(path: path), LatencyOffsets(), "a missing file is nothing calibrated")
        try LatencyOffsets.store(37, forDevice: "hw:1,0", path: path)
        try LatencyOffsets.store(-12, forDevice: "filetap:IN=/a b/in.raw,OUT=/x=y.raw", path: path)
        try LatencyOffsets.store(40, forDevice: "hw:1,0", path: path)
        let back = try LatencyOffsets.load(path: path)
        XCTAssertEqual(back.offset(forDevice: "hw:1,0"), 40)
        XCTAssertEqual(back.offset(forDevice: "filetap:IN=/a b/in.raw,OUT=/x=y.raw"), -12)
        XCTAssertEqual(back.offset(forDevice: "default"), 0)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.contains("\nhw:1,0 = 40\n"), text)
    }

    func testABadLineIsNamedWithItsNumber() {
        XCTAssertEqual(try LatencyOffsets.parse("# c\n\n  hw:0 = 12 \r\n", path: "f").frames, ["hw:0": 12])
        XCTAssertThrowsError(try LatencyOffsets.parse("hw:0 = 12\nhw:1 twelve\n", path: "f")) { error in
            XCTAssertEqual("\(error)", "f: line 2: 'hw:1 twelve' is not 'device = frames'")
        }
        XCTAssertThrowsError(try LatencyOffsets.parse(" = 5", path: "f"))
    }

    func testTheDefaultPathFollowsXDGConfigHome() {
        let saved = getenv("XDG_CONFIG_HOME").map { String(cString: $0) }
        defer { if let saved { setenv("XDG_CONFIG_HOME", saved, 1) } else { unsetenv("XDG_CONFIG_HOME") } }
        setenv("XDG_CONFIG_HOME", "/tmp/xdg-test", 1)
        XCTAssertEqual(LatencyOffsets.defaultPath, "/tmp/xdg-test/tapedeck/latency")
        unsetenv("XDG_CONFIG_HOME")
        XCTAssertTrue(LatencyOffsets.defaultPath.hasSuffix("/.config/tapedeck/latency"))
    }
}
