import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// Meters show what is heard: while a pass records, the tracks that only play keep their
/// post-fader meters, and the armed track shows its input.
final class RecordingMeterTests: XCTestCase {
    func testTracksThatPlayWhileOthersRecordReadTheirLevelNotSilence() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // Track 1 plays a 0.5-amplitude square (−6 dBFS peak); track 2 records a 0.25 input.
        let played = (0..<240_000).map { i -> Float in (i / 50) % 2 == 0 ? 0.5 : -0.5 }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [played])
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true))
        try folder.save(session)
        let input = dir + "/in.raw"
        let frames = [Float](repeating: 0.25, count: 240_000)
        try frames.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: input)) }
        let device = try ALSADuplexDevice(
            request: DeviceRequest(name: "jacktap:IN=\(input),OUT=/dev/null", sampleRate: 48000, captureChannels: 1,
                                   playbackChannels: 2, periodFrames: 256, periodCount: 3, formats: [.float32]),
            config: try ALSAConfig(path: TransportFixture.alsaConfigPath))
        let transport = try Transport(session: session, folder: folder, device: device)
        defer { transport.close() }
        var request = RecordRequest(fromFrame: 0)
        request.tracks = [1]
        try transport.record(request)
        // Every reading while recording: the playing track's and the recording track's peaks.
        var playing: [Double] = [], recorded: [Double] = []
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            usleep(50_000)
            let snap = transport.snapshot()
            guard snap.state == .recording, snap.positionFrame > 9_600 else { continue }
            playing.append(snap.trackLevels[0].map(\.peakDecibels).max() ?? -.infinity)
            recorded.append(snap.trackLevels[1].map(\.peakDecibels).max() ?? -.infinity)
        }
        transport.stopRecording()
        guard playing.count > 10 else { return XCTFail("the pass never recorded (\(playing.count) readings)") }
        // The bug read −inf for the whole pass: no reading may be silence, and the typical one
        // is the track's level (a late period on a busy machine may lower one reading a little).
        func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
        XCTAssertEqual(playing.filter { $0 < -40 }.count, 0, "the playing track's meter read silence while another recorded: \(playing)")
        XCTAssertEqual(median(playing), -6.02, accuracy: 1, "the playing track's meter reads its −6 dBFS")
        XCTAssertEqual(recorded.filter { $0 < -40 }.count, 0, "the armed track's meter read silence while recording: \(recorded)")
        XCTAssertEqual(median(recorded), -12.04, accuracy: 1, "the armed track's meter reads its −12 dBFS input")
    }
}
