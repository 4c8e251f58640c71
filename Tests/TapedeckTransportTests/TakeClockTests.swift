import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// `record --timestamp clock` to the millisecond: on a paced device whose clock is known
/// (the offline clock's first period begins when its streams start), the take's time
/// reference is the moment its first frame arrived, not when its file was made or when the
/// audio thread woke.
final class TakeClockTests: XCTestCase {
    private func realtime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    func testTheFirstFrameIsStampedWithinAMillisecondOfTheDevicesClock() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [])
        session.tracks.append(Track(name: "Mic", inputChannels: [1], armed: true))
        try folder.save(session)
        let device = OfflineClockDevice(sampleRate: 48000, captureChannels: 1, playbackChannels: 2, periodFrames: 256,
                                        capacityPeriods: 0, paced: true)
        var options = TransportOptions()
        options.stampsTakesWithClock = true
        options.playsSession = false
        let transport = try Transport(session: session, folder: folder, device: device, options: options, startsDevice: false)
        defer { transport.close() }
        var request = RecordRequest(fromFrame: 0)
        request.maxFrames = 12_000
        request.stopsWhenDone = true
        try transport.record(request)
        // The device's frame 0 arrives as its streams start: between these two readings.
        let before = realtime()
        try transport.startDevice()
        let after = realtime()
        let deadline = Date().addingTimeInterval(10)
        while transport.isRecording && Date() < deadline {
            _ = transport.snapshot()
            usleep(10_000)
        }
        let take = try XCTUnwrap(transport.collectFinishedTakes().first)
        let reference = try XCTUnwrap(try AudioFileReader(path: folder.absolutePath(of: take.region.file)).bextTimeReference)
        let midnight = Calendar.current.startOfDay(for: Date(timeIntervalSince1970: before)).timeIntervalSince1970
        let stamped = Double(reference) / 48000 + midnight
        XCTAssertGreaterThanOrEqual(stamped, before - 0.001, "\((before - stamped) * 1000) ms before the device started")
        XCTAssertLessThanOrEqual(stamped, after + 0.001, "\((stamped - after) * 1000) ms after it started (its start took \((after - before) * 1000) ms)")
        XCTAssertEqual(take.region.timelineStartFrame, 0)
        XCTAssertEqual(take.timeOfDayOrigin, Int64(reference), "the origin the take gives a session without one")
    }
}
