import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport

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
        var recordingSnapshots = 0
        var silentWhilePlaying = 0
        var inputUnheard = 0
        let deadline = Date().addingTimeInterval(3)
        while Date() < deadline {
            usleep(50_000)
            let snap = transport.snapshot()
            guard snap.state == .recording, snap.positionFrame > 9_600 else { continue }
            recordingSnapshots += 1
            let playing = snap.trackLevels[0].map(\.peakDecibels).max() ?? -.infinity
            if !(playing > -7 && playing < -5) { silentWhilePlaying += 1 }
            let recorded = snap.trackLevels[1].map(\.peakDecibels).max() ?? -.infinity
            if !(recorded > -13 && recorded < -11) { inputUnheard += 1 }
        }
        transport.stopRecording()
        XCTAssertGreaterThan(recordingSnapshots, 10, "the pass never recorded")
        XCTAssertEqual(silentWhilePlaying, 0, "the playing track's meter did not read its −6 dBFS while another track recorded")
        XCTAssertEqual(inputUnheard, 0, "the armed track's meter did not read its −12 dBFS input while recording")
    }
}
