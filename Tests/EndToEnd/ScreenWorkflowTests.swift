import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// The recording workflow on the screen (count-in, loop takes, take cycling, monitoring,
/// click, retroactive capture) over the test ALSA config's devices, driven through tmux.
final class ScreenWorkflowTests: XCTestCase {
    private var folder = ""
    private var session = ""
    private let rate = 48000

    override func setUpWithError() throws {
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    private func open(device: String, environment: [String: String] = RecordSupport.environment) throws -> ScreenTmux {
        try ScreenTmux(self, folder: folder, args: [session, "--device", device], environment: environment, width: 110)
    }

    /// Writes `folder/in.raw`: float, two channels, a signal on input 1 (multiples of 2^-15,
    /// exact in a 24-bit take); returns the signal.
    private func writeInput(seconds: Int, seed: UInt64) throws -> [Float] {
        let input = RecordSupport.signal(frames: seconds * rate, channels: 1, bits: 16, seed: seed).map { Float($0) / 32768 }
        var interleaved = [Float](repeating: 0, count: 2 * input.count)
        for (i, v) in input.enumerated() { interleaved[2 * i] = v }
        try interleaved.withUnsafeBufferPointer { Data(buffer: $0) }.write(to: URL(fileURLWithPath: folder + "/in.raw"))
        return input
    }

    private func vocal() throws -> Track {
        try XCTUnwrap(try SessionFolder(path: session).load().tracks.first { $0.name == "Vocal" })
    }

    private func line(_ text: String, containing name: String) -> String {
        text.split(separator: "\n").first { $0.contains(name) }.map(String.init) ?? ""
    }

    func testAfterACountInTheTakeStartsExactlyAtTheRecordPoint() throws {
        // filetap48 reads IN as S16 mono; unpaced, so the input is long and the take is
        // checked over its first half second only.
        let input = RecordSupport.signal(frames: 60 * rate, channels: 1, bits: 16, seed: 7)
        RecordSupport.writeRaw(input, bits: 16, to: folder + "/in.raw")
        let screen = try open(device: "filetap48:IN=\(folder)/in.raw")
        screen.waitFor("COUNT 1")
        // Four beats on: bar 2 (96000). One bar of count-in starts the transport at 0.
        screen.send("Right", "Right", "Right", "Right")
        screen.waitFor("0:00:02.000")
        screen.send("r")
        screen.waitFor("● REC")
        usleep(300_000)
        screen.send("r")
        screen.waitFor("recorded ")
        let region = try XCTUnwrap(try vocal().regions.first)
        XCTAssertEqual(region.timelineStartFrame, 96_000, "the take starts at the record point, not the count-in")
        XCTAssertEqual(region.sourceOffsetFrame, 0, "the gate drops the count-in and the round trip")
        XCTAssertGreaterThan(region.lengthFrames, 24_000)
        // Not checked against the input frame by frame: which input frame meets the record
        // point is not known here, as the screen's device reads its input from the moment it
        // opens (stopped too: armed tracks show their level), unpaced on filetap48. Where a
        // screen take lands is judged to the frame through a loopback by LoopbackMatrixTests
        // (screen r on JACK, PipeWire's JACK and ALSA).
        let metadata = try TakeMetadata.read(path: SessionFolder(path: session).absolutePath(of: region.file))
        XCTAssertEqual(metadata?.trackName, "Vocal", "the take says what it is")
        XCTAssertEqual(metadata?.timelineFrame, 96_000)
    }

    func testLoopRecordingMakesATakePerPassAndTheTakeKeyCyclesThem() throws {
        // jacktap runs in real time, so passes take as long as the loop.
        let jack = try JackServer.start(self, folder: folder)
        let screen = try open(device: "jacktap", environment: jack.environment)
        screen.waitFor("STOPPED")
        // A one-bar loop (2 s) at the start: its end at bar 2 (four beats on), looped; the
        // Vocal is armed in the demo.
        screen.send("Right", "Right", "Right", "Right")
        screen.waitFor("0:00:02.000")
        screen.send("]", "Home")
        screen.waitFor("0:00:00.000")
        screen.send("l")
        screen.waitFor("LOOP on")
        // With the screen's one bar of count-in: counted in once, then the passes.
        screen.send("r")
        screen.waitFor("COUNT-IN", timeout: 10)
        screen.waitFor("● REC", timeout: 10)
        // Two whole passes and half of a third: stopping mid-pass keeps it, after the last
        // whole pass, which plays.
        usleep(5_000_000)
        screen.send("r")
        screen.waitFor("recorded 3 takes on Vocal: take 2, the last whole pass, plays", timeout: 10)
        var track = try vocal()
        XCTAssertEqual(track.regions.count, 3)
        // The takes `record --play --loop --count-in 1` makes (RecordingWorkflowTests): a
        // loop's length each, back to back in one file from its first frame.
        let passes = track.regions.sorted { ($0.takeNumber ?? 0) < ($1.takeNumber ?? 0) }
        XCTAssertEqual(passes.prefix(2).map(\.lengthFrames), [96_000, 96_000])
        XCTAssertEqual(passes.map(\.sourceOffsetFrame), [0, 96_000, 192_000])
        let group = try XCTUnwrap(track.takeGroups.first)
        XCTAssertEqual(track.takeGroups.count, 1, "one take group")
        XCTAssertEqual(track.regions.compactMap(\.takeNumber).sorted(), [1, 2, 3])
        XCTAssertTrue(track.regions.allSatisfy { $0.timelineStartFrame == 0 }, "every pass sits on the loop")
        XCTAssertEqual(track.activeTakeNumber(group: group), 2, "the last complete pass plays, not the one cut short")
        XCTAssertLessThan(passes[2].lengthFrames, 96_000, "the third pass was cut short")
        // Named beside the track's name (the take heard at the playhead), not over its waveform.
        screen.waitFor("Vocal t2/3")
        // The Vocal is track 4.
        screen.send("Down", "Down", "Down", "Home", "T")
        screen.waitFor("take 3/3 plays on Vocal")
        screen.send("T")
        screen.waitFor("take 1/3 plays on Vocal")
        screen.send("C-s")
        screen.waitFor("saved ")
        track = try vocal()
        XCTAssertEqual(track.activeTakeNumber(group: group), 1, "the choice is saved")
        screen.send("u")
        screen.waitFor("undid: Cycle take")
    }

    func testMonitoringClickAndCountInKeysShowTheirState() throws {
        let screen = try open(device: "offline")
        screen.waitFor("CLICK off")
        screen.send("Down", "Down", "Down", "o")
        var text = screen.waitFor("monitoring off")
        XCTAssertTrue(line(text, containing: "Vocal").contains("R - - -"), line(text, containing: "Vocal"))
        screen.send("o")
        text = screen.waitFor("monitoring input")
        XCTAssertTrue(line(text, containing: "Vocal").contains("R - - I"), line(text, containing: "Vocal"))
        screen.send("o")
        text = screen.waitFor("monitoring auto")
        XCTAssertTrue(line(text, containing: "Vocal").contains("R - - A"), line(text, containing: "Vocal"))
        screen.send("u")
        screen.waitFor("undid: monitoring Vocal")
        screen.send("C")
        screen.waitFor("CLICK rec")
        screen.send("C")
        screen.waitFor("CLICK on")
        screen.send("C")
        screen.waitFor("CLICK off")
        screen.send("I")
        screen.waitFor("COUNT 2")
        screen.send("I")
        screen.waitFor("COUNT 0")
        screen.send("R")
        screen.waitFor("retroactive capture needs an audio device")
    }

    func testTheRetroKeyKeepsTheLastTenSecondsWhereTheyWerePlayed() throws {
        // Float, two channels (the screen opens the inputs its tracks use: Keys listens to
        // 1-2), the signal on input 1. Multiples of 2^-15 are exact in the 24-bit take.
        let input = try writeInput(seconds: 80, seed: 11)
        let jack = try JackServer.start(self, folder: folder)
        let screen = try open(device: "jacktap:IN=\(folder)/in.raw", environment: jack.environment)
        screen.waitFor("LISTENING", timeout: 10)
        // Longer than the ten seconds kept, so the take does not start at the beginning. An
        // xrun meanwhile (a busy machine) is silence in the memory where device time was lost,
        // but jacktap's file lost nothing (it reads on where it stopped), so the take would not
        // be the file in one piece: then it listens 12 s more, up to five times.
        func xruns() -> Int? {
            let text = screen.capture()
            return text.range(of: #"xruns \d+"#, options: .regularExpression).flatMap { Int(text[$0].dropFirst(6)) }
        }
        for _ in 0..<5 {
            let before = xruns()
            usleep(12_000_000)
            if let before, xruns() == before { break }
        }
        screen.send("R")
        screen.waitFor("kept 0:00:10.000 on Vocal", timeout: 10)
        let xrunsSinceOpen = xruns() ?? 0
        let region = try XCTUnwrap(try vocal().regions.first)
        XCTAssertEqual(region.lengthFrames, Int64(10 * rate))
        let start = Int(region.timelineStartFrame)
        XCTAssertGreaterThan(start, 0, "the first seconds were forgotten")
        let take = try Signals.read(SessionFolder(path: session).absolutePath(of: region.file)).channels[0]
        XCTAssertEqual(take.count, 10 * rate)
        // The take holds `input[at..<at + piece.count]` for `piece` of the take, from `from` on.
        func found(_ piece: Range<Int>, in range: Range<Int>) -> Int? {
            let n = piece.count
            return range.first { at in
                at + n <= input.count && input[at] == take[piece.lowerBound] && input[at..<(at + n)].elementsEqual(take[piece])
            }
        }
        // Without playback the timeline is the input's own count from the playhead (0), in
        // device time: the duplex device's start drops up to one buffer (768 frames) of the
        // file's input before the first period, so the take is the input from `start` or up
        // to a buffer later — whole, in one piece.
        if found(0..<take.count, in: start..<(start + 769)) != nil { return }
        // Unless an xrun cost device time (one as the screen opens is usual, and costs
        // nothing): jacktap's file loses nothing then (it reads on where it stopped), so it is
        // behind device time for good and no measure of the take's place, which the JACK
        // tests judge by frame time through stalls (JACKRetroStallTests); and an xrun inside
        // the ten seconds is silence in them. The take is then the input read on in order:
        // each stretch between silences the input from where the last one ended, or up to a
        // buffer later (a restart drops up to a buffer as the start does), the first from
        // before its place.
        XCTAssertGreaterThan(xrunsSinceOpen, 0, "the take is the input from its place or within a buffer after it: placed at \(start), "
                             + "its first frames found at \(found(0..<64, in: 0..<(input.count - 64)).map(String.init) ?? "none")")
        guard xrunsSinceOpen > 0 else { return }
        var pieces: [Range<Int>] = []
        var k = 0
        while k < take.count {
            let silent = take[k] == 0 && k + 1 < take.count && take[k + 1] == 0
            if silent {
                while k < take.count && take[k] == 0 { k += 1 }
                continue
            }
            let begin = k
            while k < take.count && !(take[k] == 0 && k + 1 < take.count && take[k + 1] == 0) { k += 1 }
            pieces.append(begin..<k)
        }
        var next: Int?
        for piece in pieces {
            let range = next.map { $0..<min($0 + 769, input.count) } ?? 0..<min(start + 769, input.count)
            let at = found(piece, in: range)
            XCTAssertNotNil(at, "after \(xrunsSinceOpen) xruns, take frames \(piece) are the input read on from \(next.map(String.init) ?? "before \(start)"); pieces \(pieces)")
            guard let at else { return }
            next = at + piece.count
        }
        print("retro key: \(xrunsSinceOpen) xruns since the screen opened; the take placed at \(start) is the input read on in \(pieces.count) pieces")
    }

    /// A take from the screen's `r` is compensated exactly as `record --play`'s on the same
    /// device, calibrated offset included (the screen ignored `tapedeck calibrate`'s offset, so
    /// on JACK its takes landed that many frames late and carried no latency line).
    func testTheScreensTakesUseTheCalibratedLatencyAsRecordDoes() throws {
        _ = try writeInput(seconds: 20, seed: 5)
        let jack = try JackServer.start(self, folder: folder)
        let device = "jacktap:IN=\(folder)/in.raw"
        let config = folder + "/xdg"
        try FileManager.default.createDirectory(atPath: config + "/tapedeck", withIntermediateDirectories: true)
        try "# tapedeck calibrate\n\(device) = 300\n".write(toFile: config + "/tapedeck/latency", atomically: true, encoding: .utf8)
        var env = jack.environment
        env["XDG_CONFIG_HOME"] = config

        let record = try Tapedeck.run(["record", session, "--track", "Vocal", "--play", "--device", device, "--duration", "0.5",
                                       "--json"], environment: env)
        XCTAssertEqual(record.status, 0, record.stderr)
        let done = try XCTUnwrap(RecordSupport.jsonLines(record.stdout).last { $0["event"] as? String == "done" })
        let recordLatency = try XCTUnwrap(done["latency_frames"] as? Int)
        XCTAssertGreaterThanOrEqual(recordLatency, 300, "record adds the calibrated 300 frames")
        let first = try XCTUnwrap(try vocal().regions.last)

        let screen = try open(device: device, environment: env)
        screen.waitFor("STOPPED")
        screen.send("r")
        screen.waitFor("● REC")
        usleep(700_000)
        screen.send("Space")
        screen.waitFor("STOPPED")
        let regions = try vocal().regions
        let take = try XCTUnwrap(regions.last, "the screen's take is on the Vocal track")
        XCTAssertNotEqual(take.file, first.file)
        let metadata = try XCTUnwrap(try TakeMetadata.read(path: SessionFolder(path: session).absolutePath(of: take.file)),
                                     "the take says how it was recorded")
        XCTAssertEqual(Int(metadata.latencyFrames), recordLatency, "the screen compensates as record does, calibration included")
    }

    /// JACK's transport left at 5 s by another program: the screen opens at its own playhead
    /// (0) and moves JACK's transport there, rather than opening wherever JACK stood.
    func testTheScreenOpensAtItsPlayheadAndMovesJacksTransportThere() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/jack_transport"),
              FileManager.default.isExecutableFile(atPath: "/usr/bin/jack_showtime") else {
            throw XCTSkip("jack_transport and jack_showtime (jackd2) are not installed")
        }
        let jack = try JackServer.start(self, folder: folder)
        func jackFrame() throws -> Int? {
            let shown = try Tapedeck.run(["-c", "timeout -s KILL 1 /usr/bin/jack_showtime | head -1"], executable: "/bin/sh",
                                         environment: jack.environment)
            return shown.stdout.split(separator: " ").dropFirst(2).first.flatMap { Int($0) }
        }
        let moved = try Tapedeck.run(["-c", "echo 'locate 240000' | timeout 3 /usr/bin/jack_transport"], executable: "/bin/sh",
                                     environment: jack.environment)
        XCTAssertEqual(moved.status, 0, moved.stderr)
        XCTAssertEqual(try jackFrame(), 240_000, "another program left JACK's transport at 5 s")
        let screen = try open(device: "jack", environment: jack.environment)
        screen.waitFor("STOPPED")
        XCTAssertTrue(screen.capture().contains("0:00:00.000"), screen.capture())
        var frame: Int?
        for _ in 0..<50 {
            frame = try jackFrame()
            if frame == 0 { break }
            usleep(100_000)
        }
        XCTAssertEqual(frame, 0, "the screen moved JACK's transport to its playhead")
    }
}
