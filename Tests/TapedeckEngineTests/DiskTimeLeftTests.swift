import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// A capture device that gives a ramp at twice real time: slow enough that the capture
/// writer measures the disk several times during a take of a few seconds.
final class QuickPacedDevice: PeriodDevice, @unchecked Sendable {
    var configuration: DeviceConfiguration
    let driver = PeriodDriver()
    private var frame: Int64 = 0

    init(periodFrames: Int = 256) {
        configuration = DeviceConfiguration(name: "quick", sampleRate: 48000, captureChannels: 1, playbackChannels: 0,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: periodFrames * 2,
                                            captureFormat: .s16, playbackFormat: nil,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: false)
        configuration.isPaced = false
    }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        // A test device: sleeping here stands for a device's clock.
        usleep(UInt32(frameCount * 1_000_000 / 48000 / 2))
        for i in 0..<frameCount { channels[0][i] = XrunDevice.signal(frame + Int64(i)) }
        frame += Int64(frameCount)
        return .ok
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult { .ok }
}

/// "Time left" while recording comes from what is written (bytes a second of every take
/// still written, less the writer's finishing reserve) and moves as the take grows; a pass
/// whose every take's disk refused a write ends by itself with what was written (issue 24).
final class DiskTimeLeftTests: XCTestCase {
    func testTimeLeftFallsAsFramesAreWrittenAndTheFullDiskEndsThePassWithWhatWasKept() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let dir = try Fixture.temporaryFolder()
        let disk = dir + "/small"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        guard system("mount -t tmpfs -o size=4m tmpfs '\(disk)'") == 0 else { throw XCTSkip("cannot mount a tmpfs here") }
        defer { _ = system("umount -l '\(disk)'"); try? FileManager.default.removeItem(atPath: dir) }
        var fs = statvfs()
        XCTAssertEqual(statvfs(disk, &fs), 0)
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        // Three seconds of 48 kHz mono 16-bit (96,000 bytes a second) before the writer stops.
        FileManager.default.createFile(atPath: disk + "/filler",
                                       contents: Data(count: Int(free - AudioFileWriter.finishingReserveBytes - 3 * 96_000)))

        let engine = Engine(device: QuickPacedDevice(), options: EngineOptions())
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1]))
        let path = disk + "/take.wav"
        let set = try engine.startTakes([TakeRequest(track: 0, channelCount: 1, path: path, container: .wav, encoding: .int16)],
                                        gate: TakeGate(recordPoint: 0, maxFrames: 48_000 * 60))
        XCTAssertEqual(set.bytesPerSecond, 96_000, "the take's data rate")
        engine.play()
        try engine.start()
        var readings: [(left: Double, free: Int64)] = []
        let deadline = Date().addingTimeInterval(20)
        while !set.hasEnded && Date() < deadline {
            let status = engine.status()
            if let left = status.diskSecondsLeft, readings.last?.left != left { readings.append((left, status.diskFreeBytes)) }
            usleep(20_000)
        }
        XCTAssertTrue(set.hasEnded, "the pass ended by itself when the disk refused a write")
        let outcomes = engine.finish(set)
        engine.close()

        XCTAssertGreaterThanOrEqual(readings.count, 3, "time left moved while it recorded: \(readings)")
        XCTAssertEqual(readings.first?.left ?? 0, 3, accuracy: 0.6, "the room less the reserve, at the take's rate")
        for (a, b) in zip(readings, readings.dropFirst()) {
            XCTAssertLessThan(b.left, a.left, "it only falls: \(readings)")
        }
        for r in readings {
            XCTAssertEqual(r.left, DiskSpace.secondsLeft(freeBytes: r.free, bytesPerSecond: 96_000), accuracy: 0.002)
        }
        let failure = try XCTUnwrap(set.failedTakes.first)
        XCTAssertTrue(failure.isDiskFull, failure.reason)
        XCTAssertEqual(outcomes.first?.frameCount, failure.keptFrames)
        XCTAssertEqual(try AudioFileReader(path: path).frameCount, failure.keptFrames, "the file holds what was kept")
        XCTAssertEqual(Double(failure.keptFrames) / 48_000, 3, accuracy: 0.2, "it wrote until the room was gone")
    }

    func testATakeOnAFullDiskStopsWhileTheTakeOnAnotherDiskRecordsOn() throws {
        guard getuid() == 0 else { throw XCTSkip("mounting a small tmpfs needs root") }
        let dir = try Fixture.temporaryFolder()
        let disk = dir + "/small"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        guard system("mount -t tmpfs -o size=4m tmpfs '\(disk)'") == 0 else { throw XCTSkip("cannot mount a tmpfs here") }
        defer { _ = system("umount -l '\(disk)'"); try? FileManager.default.removeItem(atPath: dir) }
        var fs = statvfs()
        XCTAssertEqual(statvfs(disk, &fs), 0)
        let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
        FileManager.default.createFile(atPath: disk + "/filler",
                                       contents: Data(count: Int(free - AudioFileWriter.finishingReserveBytes - 96_000)))
        let engine = Engine(device: QuickPacedDevice(), options: EngineOptions())
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1, 1]))
        let full = disk + "/full.wav", roomy = dir + "/roomy.wav"
        let set = try engine.startTakes([TakeRequest(track: 0, channelCount: 1, path: full, container: .wav, encoding: .int16),
                                         TakeRequest(track: 1, channelCount: 1, path: roomy, container: .wav, encoding: .int16)],
                                        gate: TakeGate(recordPoint: 0, maxFrames: 3 * 48_000))
        XCTAssertEqual(set.bytesPerSecond, 2 * 96_000, "both takes' data rate")
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(20)
        while !set.hasEnded && Date() < deadline { usleep(10_000) }
        let failures = set.failedTakes
        let outcomes = engine.finish(set)
        engine.close()
        XCTAssertEqual(failures.map(\.index), [0], "only the take on the full disk stopped")
        let kept = try XCTUnwrap(failures.first?.keptFrames)
        XCTAssertEqual(Double(kept) / 48_000, 1, accuracy: 0.2, "it kept the second there was room for")
        XCTAssertEqual(try AudioFileReader(path: full).frameCount, kept)
        XCTAssertEqual(outcomes.map(\.frameCount), [kept, 3 * 48_000], "the other take recorded on to its end")
        XCTAssertNil(outcomes[1].error)
        XCTAssertEqual(try AudioFileReader(path: roomy).frameCount, 3 * 48_000)
    }
}
