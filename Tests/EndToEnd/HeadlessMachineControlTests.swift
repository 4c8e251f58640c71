import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// MIDI machine control reaching a headless `record` (over JACK MIDI, from a client of the
/// test's own) is answered as `tapedeck ctl` is: a record strobe during the take leaves it
/// alone, a locate is refused (a take is never torn in two), a stop ends the take with
/// everything kept; each said on stderr naming the port.
final class HeadlessMachineControlTests: XCTestCase {
    func testMMCDuringAHeadlessTakeObeysTheControlSocketsRules() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }
        let jack = try JackServer.start(self, folder: dir.path)
        let folder = SessionFolder(path: path("song.tapedeck"))
        var session = Session(sampleRate: 48000)
        session.tracks = [Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off)]
        try folder.create(session)
        // Record strobe, LOCATE 00:00:10:00 (25 fps), stop: 400 ms apart, a second and a half
        // after `record` connects.
        let messages = ["xF07F7F0606F7", "xF07F7F0644060120000A0000F7", "xF07F7F0601F7"]
        try JackMIDISender.start(self, client: "tdmmc", start: "1500", gapMilliseconds: 400, messages: messages,
                                 environment: jack.environment, folder: dir.path)
        let record = try Tapedeck.run(["record", folder.path, "--device", "jack", "--connect", "none", "--midi-in", "jack:tdmmc:midi_out"],
                                      environment: jack.environment.merging(["XDG_RUNTIME_DIR": dir.path]) { $1 }, timeout: 60)
        XCTAssertEqual(record.status, 0, "MMC stop ends the take: \(record.stderr)")
        let lines = record.stderr.components(separatedBy: CharacterSet(charactersIn: "\r\n"))
        XCTAssertTrue(lines.contains { $0.hasPrefix("already recording — asked by MIDI (") }, "a second strobe is not a stop: \(record.stderr)")
        XCTAssertTrue(lines.contains { $0.contains("asked 'locate 480000f': recording: locate 480000f is refused while a take runs") },
                      record.stderr)
        XCTAssertTrue(lines.contains { $0.hasPrefix("stopping: the takes are being finished — asked by MIDI (") }, record.stderr)
        let region = try XCTUnwrap(try folder.load().tracks[0].regions.first, "the take is on its track: \(record.stderr)")
        XCTAssertEqual(region.timelineStartFrame, 0, "where it started: the locate did not move it")
        XCTAssertGreaterThan(region.lengthFrames, 48000, "recorded until the stop, more than a second after connecting")
    }
}
