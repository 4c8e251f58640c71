import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Every kind of take lands where it was played, to the frame: the one latency model (capture
/// latency of the recorded port + playback latency of the master's outputs as the server
/// reports them now + the calibrated residual) on jackd2 and on PipeWire's JACK.
///
/// A session plays a track of single-frame clicks while an armed track records through a
/// loopback cable (`td-jack-loop`, delaying by a known number of frames and reporting it
/// through JACK's latency API as a sound card does). Each take is judged by where every click
/// came back in it: 0 frames off, in every cell of
/// {screen `r`, `record --play`, `ctl record`, a punch, a loop's second pass}
/// × {ports connected by `--connect`, ports patched with `jack_connect` after start}
/// × {64-, 256- and 1024-frame periods}.
/// A click that falls where an xrun lost frames (silence in the take), or that Tapedeck played
/// beside a loss it reported, is not there to judge; every other click must be on its frame,
/// every take must have one, and most of all the clicks must be there (a busy machine at 64
/// frames loses some). A take with a click off is taken again only when the server reported
/// an xrun or skipped the cable during it (see ``judgeCell``).
final class LoopbackMatrixTests: XCTestCase {
    static let rate = 48000
    /// Clicks on the timeline (irregular, so no two line up at a wrong lag), from 1.2 s on:
    /// after any patch made at start.
    static let clicks: [Int64] = [57_617, 70_013, 88_007, 101_111, 119_999, 131_071, 150_099, 171_003]
    static let loopRange = FrameRange(startFrame: 48_000, endFrame: 144_000)
    static let punchRange = FrameRange(startFrame: 62_000, endFrame: 140_000)
    /// What the loopback delays by beyond the graph's period.
    static let delayFrames = 100

    enum FrontEnd: String, CaseIterable {
        case screen = "screen r"
        case record = "record --play"
        case ctl = "ctl record"
        case punch = "record --punch"
        case loop = "loop pass 2"
    }

    func testEveryKindOfTakeLandsOnItsFrameOnJackd2() throws { try matrix(.jackd2) }

    /// On PipeWire's JACK (0.3.65) this once failed: at 64-frame periods a loop recording
    /// patched after start lost its second pass, a punch patched after start placed a click
    /// 448 frames late, and near an xrun the server reported a click came back one period
    /// late. Since a catch-up burst's clock is no longer taken for lost frames
    /// (JACKClockGaps) it passed 7 of 7 runs, 2 on a busy machine, and is part of `make test`.
    /// CI then failed it once, three takes of one cell (64 frames, screen r) each with a
    /// click a period late, the cable not run for 91 to 239 spans and no xrun from the
    /// server. The judge held clicks Tapedeck played beside a loss it reported to their
    /// frames; such a click is late by design (see ``clickOffsets(session:pass:period:)``).
    func testEveryKindOfTakeLandsOnItsFrameOnPipeWiresJACK() throws {
        try matrix(.pipewire)
    }

    /// A loopback that keeps its delay to itself (as converters do): one `calibrate` at 256
    /// frames stores only the residual, and a take through it lands on its frame at 64, 256
    /// and 1024 frames.
    func testOneCalibrationHoldsAtEveryBufferSizeOnJackd2() throws { try calibrated(.jackd2) }

    func testOneCalibrationHoldsAtEveryBufferSizeOnPipeWiresJACK() throws { try calibrated(.pipewire) }

    /// A jackd2 server at 256 frames with the loop `tdloop` on it, and ALSA's JACK plugin
    /// (`jackloop`) calibrated through it at 256 × 3 frames: the folder, the server, the
    /// environment the plugin needs, and what `calibrate` printed.
    private func calibratedOnALSA() throws -> (String, LoopbackServer, [String: String], Tapedeck.Result) {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(.jackd2, period: 256, folder: dir, test: self)
        try server.startLoop("tdloop", delayFrames: LoopbackMatrixTests.delayFrames)
        let env = server.environment.merging(["XDG_CONFIG_HOME": dir + "/config-alsa", "XDG_RUNTIME_DIR": dir]) { $1 }
        let cal = try Tapedeck.run(["calibrate", "--device", "jackloop", "--period", "256", "--periods", "3"], environment: env, timeout: 60)
        XCTAssertEqual(cal.status, 0, cal.stderr)
        return (dir, server, env, cal)
    }

    /// On ALSA (through ALSA's JACK plugin, `jackloop`): one `calibrate` at 256 × 3 frames,
    /// then takes at 512 × 3 and 128 × 4 land on their frames (ALSA's part, the playback
    /// buffer, is read from the device as it opens; the residual stays what it was) — while
    /// the server stalls ten times in each take. Such a stall makes the server skip one
    /// of the plugin's two clients for a cycle, which slipped capture and playback a server
    /// period apart with no xrun ALSA reported: every click after it was 256 frames early or
    /// late, 256 to 1024 frames as slips added up (before ``RoundTripWatch``). A click where a
    /// restart lost frames is not there to judge; every click there must be on its frame.
    func testOnALSAOneCalibrationHoldsAtTwoPeriodSizesThroughStalls() throws {
        let (dir, server, env, cal) = try calibratedOnALSA()
        XCTAssertTrue(cal.stdout.contains("reported    768 frames by ALSA (capture 0 + playback 768)"), cal.stdout)
        var failures: [String] = []
        var judged = 0
        for (period, periods) in [(512, 3), (128, 4)] {
            let session = try makeSession(in: dir, name: "alsa\(period)")
            // Stalls while the clicks play (they start 1.2 s into the take; the take starts
            // after the program has opened the device, well under a second here): ten of 15,
            // 30 and 60 ms, a quarter second apart. Before the watch, 4 of 6 runs of this
            // schedule put clicks 256 to 1024 frames off.
            let stalls = DispatchGroup()
            nonisolated(unsafe) let stalled = server  // only its stall() runs meanwhile
            DispatchQueue.global().async(group: stalls) {
                Thread.sleep(forTimeInterval: 1.3)
                for k in 0..<10 {
                    stalled.stall(milliseconds: [15, 30, 60][k % 3])
                    Thread.sleep(forTimeInterval: 0.25)
                }
            }
            let r = try Tapedeck.run(["record", session, "--play", "--device", "jackloop", "--period", "\(period)", "--periods", "\(periods)",
                                      "--duration", "3.8"], environment: env, timeout: 60)
            stalls.wait()
            guard r.status == 0 else {
                failures.append("\(period) × \(periods): record failed: \(r.stderr)")
                continue
            }
            let offsets = try clickOffsets(session: session, pass: nil, period: nil).offsets
            judged += offsets.count
            if !offsets.allSatisfy({ $0 == 0 }) || offsets.isEmpty { failures.append("\(period) × \(periods): clicks off by \(offsets)") }
        }
        XCTAssertEqual(failures, [], "after one calibrate at 256 × 3, through server stalls:\n" + failures.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(judged, 8, "clicks judged in both takes")
    }

    /// On ALSA the screen's `r` places a take as `record` does: after one calibrate at 256 × 3,
    /// a screen take through `jackloop` (the screen opens ALSA at 256 × 3; a bar counted in)
    /// has every click on its frame. The matrix's screen cells are JACK's; this is ALSA's.
    func testOnALSATheScreensTakeLandsOnItsFrame() throws {
        let (dir, server, env, cal) = try calibratedOnALSA()
        var failures: [String] = [], retried: [String] = []
        let judged = judgeCell("ALSA, screen r", server: server, loop: "tdloop", pass: nil, period: 256, failures: &failures,
                               retried: &retried) { attempt in
            let session = try makeSession(in: dir, name: "alsascreen\(attempt)")
            let screen = try ScreenTmux(self, folder: dir, args: [session, "--device", "jackloop"],
                                        environment: env)
            defer { screen.kill() }
            screen.waitFor("STOPPED", timeout: 15)
            screen.send("r")
            // A bar counted in (2 s), then the take past the last click.
            usleep(6_200_000)
            screen.send("Space")
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if let s = try? SessionFolder(path: session).load(), s.tracks[1].regions.contains(where: { $0.file.hasPrefix("audio/take-") }) { break }
                usleep(100_000)
            }
            screen.send("q")
            return session
        }
        if !retried.isEmpty { print("taken again:\n" + retried.joined(separator: "\n")) }
        XCTAssertEqual(failures, [], failures.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(judged.found, 4, "clicks judged: \(judged.found) of \(judged.expected)")
    }

    // MARK: - The matrix

    private func matrix(_ kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        try server.startLoop("tdloop", delayFrames: LoopbackMatrixTests.delayFrames)
        var failures: [String] = []
        var cells = 0, found = 0, expected = 0
        var retried: [String] = []
        for period in [64, 256, 1024] {
            try server.setPeriod(period)
            for front in FrontEnd.allCases {
                for patched in [false, true] {
                    let cell = "\(kind.rawValue), \(period) frames, \(front.rawValue), \(patched ? "patched after start" : "--connect")"
                    cells += 1
                    let judged = judgeCell(cell, server: server, loop: "tdloop", pass: front == .loop ? 2 : nil, period: Int64(period),
                                           failures: &failures, retried: &retried) { attempt in
                        let session = try makeSession(in: dir, name: "c\(cells)-\(attempt)")
                        try take(front, session: session, patched: patched, server: server, connect: "tdloop:", loop: "tdloop")
                        return session
                    }
                    found += judged.found
                    expected += judged.expected
                }
            }
        }
        XCTAssertEqual(failures, [], "\(failures.count) of \(cells) cells are not 0 frames off:\n" + failures.joined(separator: "\n"))
        XCTAssertGreaterThanOrEqual(found * 10, expected * 7, "\(found) of \(expected) clicks were in their takes to judge")
        print("loopback matrix on \(kind.rawValue): \(cells) cells, \(found) of \(expected) clicks judged, \(failures.count) off, "
              + "\(retried.count) taken again:\n" + retried.joined(separator: "\n"))
    }

    private func calibrated(_ kind: LoopbackServer.Kind) throws {
        let dir = try Tapedeck.temporaryFolder(self).path
        let server = try LoopbackServer(kind, period: 256, folder: dir, test: self)
        try server.startLoop("tdcal", delayFrames: LoopbackMatrixTests.delayFrames, reports: false)
        let config = dir + "/config-calibrated"
        let cal = try Tapedeck.run(["calibrate", "--device", "jack", "--connect", "tdcal:"],
                                   environment: server.environment.merging(["XDG_CONFIG_HOME": config]) { $1 }, timeout: 60)
        XCTAssertEqual(cal.status, 0, cal.stderr)
        XCTAssertTrue(cal.stdout.contains("reported    256 frames by \(kind == .jackd2 ? "JACK" : "PipeWire (JACK)")"), cal.stdout)
        XCTAssertTrue(cal.stdout.contains("residual    100 frames"), "only what the device does not report is stored:\n\(cal.stdout)")
        var failures: [String] = []
        var retried: [String] = []
        for period in [64, 1024, 256] {
            try server.setPeriod(period)
            _ = judgeCell("\(period) frames", server: server, loop: "tdcal", pass: nil, period: Int64(period), failures: &failures,
                          retried: &retried) { attempt in
                let session = try makeSession(in: dir, name: "cal\(period)-\(attempt)")
                try take(.record, session: session, patched: false, server: server, connect: "tdcal:", loop: "tdcal", config: config)
                return session
            }
        }
        if !retried.isEmpty { print("taken again:\n" + retried.joined(separator: "\n")) }
        XCTAssertEqual(failures, [], "after one calibrate at 256 frames:\n" + failures.joined(separator: "\n"))
    }

    // MARK: - One cell

    /// Takes a cell (`take` records attempt k's session and returns its path) until it can be
    /// judged, and judges it: every click in the take on its frame.
    ///
    /// A click off its frame in a take during which the server reported no xrun and ran the
    /// cable every cycle is a failure at once. Taken again, up to three takes in all: a take
    /// with no click to judge (an xrun at 64 frames on a busy machine lost them, or the pass),
    /// and a take with a click off in which the server reported an xrun or did not run the
    /// cable for some cycles (PipeWire skips a client without reporting an xrun). The cable is
    /// a JACK client in a feedback loop, not a card: it counts the frames it processes, so a
    /// cycle it was not run for carries what was in its line a period late, and when one of
    /// the two clients runs late (an xrun), the other can be handed the late one's previous
    /// buffer. Under a load of 8 on two cores one cell in 30 had one click of 8 a period late
    /// (64 frames at 64-frame periods, 256 at 256), the clicks before and after it on their
    /// frames: not a model that is off, which would move every click. What Tapedeck does with
    /// frames around an xrun is held to the sample elsewhere (`JACKTakeUnderLoadTests`,
    /// `ServerStallTests`: a source by JACK's frame time, no loop). A model that is wrong
    /// misplaces clicks in every take, xrun or not, and fails here. (A cable that kept its
    /// line by JACK's frame time instead was tried and taken out: on jackd2 it put clicks of
    /// `bench jack`'s alignment row 64 to 256 frames off in 2 runs of 6, probably as a late
    /// cycle reads the next cycle's frame time; the counting cable was 0 off in 4 of 4.)
    private func judgeCell(_ cell: String, server: LoopbackServer, loop: String, pass: Int?, period: Int64, failures: inout [String],
                           retried: inout [String], take: (Int) throws -> String) -> (found: Int, expected: Int) {
        for attempt in 0..<3 {
            var why: String
            do {
                // A loopback the server closed under load (seen once at 1024 frames: every
                // later take silent, jack_connect refused) is started again before a take.
                if let restarted = try server.restartLoopIfGone(loop) { retried.append("\(cell): \(restarted)") }
                let before = server.report(loop)
                let session = try take(attempt)
                let judged = try clickOffsets(session: session, pass: pass, period: period)
                usleep(50_000)  // the loop prints the server's xruns every 10 ms
                let after = server.report(loop)
                let xruns = after.xruns - before.xruns
                // Cycles the server did not run the loop for: what was in its line then came out
                // that much later. Said, so a click off tells the cable's doing from Tapedeck's.
                let unrun = after.skippedSpans.dropFirst(before.skippedSpans.count)
                let said = "(\(judged.expected) in the take \(judged.take); \(xruns) xruns on the server meanwhile; "
                    + "the loop not run for \(unrun.count) spans, \(unrun.map { $0.upperBound - $0.lowerBound }.reduce(0, +)) frames)"
                if !judged.offsets.allSatisfy({ $0 == 0 }) {
                    why = "clicks off by \(judged.offsets) \(said)"
                    if xruns == 0 && unrun.isEmpty { failures.append("\(cell): \(why)"); return (0, 0) }
                } else if judged.offsets.isEmpty {
                    why = "no click to judge \(said)"
                } else {
                    return (judged.offsets.count, judged.expected)
                }
            } catch {
                why = "\(error)"
            }
            if attempt == 2 { failures.append("\(cell), three takes: \(why)") } else { retried.append("\(cell): \(why)") }
        }
        return (0, 0)
    }

    // MARK: - One take

    struct CellError: Error, CustomStringConvertible {
        var description: String
    }

    /// Records one take of `session` through the loopback `loop` as `front` does.
    private func take(_ front: FrontEnd, session: String, patched: Bool, server: LoopbackServer, connect: String, loop: String,
                      config: String? = nil) throws {
        let folder = (session as NSString).deletingLastPathComponent
        var env = server.environment
        env["XDG_CONFIG_HOME"] = config ?? folder + "/config"
        if server.kind == .jackd2 { env["XDG_RUNTIME_DIR"] = folder }
        let connection = patched ? "none" : connect
        // The last take's Tapedeck has ended, but the server may not have let go of its client
        // yet: one started now would be named tapedeck-01, and its ports not be the ones patched.
        try server.waitUntilGone(client: "tapedeck")
        let ports = ["tapedeck:out_L", "tapedeck:Vocal_in"]
        func patch(running: () -> Bool, printed: () -> String) throws {
            try server.waitForPorts(ports, running: running, printed: printed)
            server.connect("tapedeck:out_L", "\(loop):in_1")
            server.connect("\(loop):out_1", "tapedeck:Vocal_in")
        }
        switch front {
        case .record, .punch, .loop:
            var args = ["record", session, "--play", "--device", "jack", "--connect", connection, "--json"]
            switch front {
            case .punch: args += ["--punch", "\(Self.punchRange.startFrame)f-\(Self.punchRange.endFrame)f", "--duration", "4"]
            case .loop: args += ["--loop", "--duration", "5.5"]
            default: args += ["--duration", "3.8"]
            }
            let out = folder + "/record.out", err = folder + "/record.err"
            let child = try SpawnedChild([Tapedeck.binary] + args, environment: env, stdoutPath: out, stderrPath: err)
            if patched {
                do {
                    try patch(running: { child.isRunning }, printed: { (try? String(contentsOfFile: err, encoding: .utf8)) ?? "" })
                } catch {
                    _ = child.kill(SIGTERM)
                    throw error
                }
            }
            guard let status = child.wait(timeoutSeconds: 60) else {
                _ = child.kill(SIGKILL)
                throw CellError(description: "record did not end")
            }
            guard (status >> 8) & 0xff == 0 else {
                throw CellError(description: "record failed: \((try? String(contentsOfFile: err, encoding: .utf8)) ?? "")")
            }
        case .screen, .ctl:
            let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "jack", "--connect", connection],
                                        environment: env)
            defer { screen.kill() }
            screen.waitFor("STOPPED", timeout: 15)
            // The screen shows STOPPED once its engine runs, its JACK client open.
            let running = { screen.isRunning }, printed = { screen.capture() }
            if patched {
                try patch(running: running, printed: printed)
            } else {
                try server.waitForPorts(ports, running: running, printed: printed)
            }
            if front == .screen {
                screen.send("r")
            } else {
                let r = try Tapedeck.run(["ctl", "--session", session, "record"], environment: env)
                guard r.status == 0 else { throw CellError(description: "ctl record: \(r.stderr)") }
            }
            // The screen counts a bar in (2 s), then records from the playhead past the last click.
            usleep(6_200_000)
            if front == .screen {
                screen.send("Space")
            } else {
                let r = try Tapedeck.run(["ctl", "--session", session, "stop"], environment: env)
                guard r.status == 0 else { throw CellError(description: "ctl stop: \(r.stderr)") }
            }
            // The screen saves the session with the take placed.
            let deadline = Date().addingTimeInterval(15)
            while Date() < deadline {
                if let s = try? SessionFolder(path: session).load(), s.tracks[1].regions.contains(where: { $0.file.hasPrefix("audio/take-") }) { break }
                usleep(100_000)
            }
            screen.send("q")
            let quit = Date().addingTimeInterval(10)
            while screen.isRunning && Date() < quit { usleep(50_000) }
        }
    }

    // MARK: - The session and the judge

    /// A session with the click track on track 1 and an armed Vocal (input 1) on track 2.
    private func makeSession(in dir: String, name: String) throws -> String {
        let path = dir + "/\(name).tapedeck"
        let folder = SessionFolder(path: path)
        var session = Session(sampleRate: Self.rate)
        let frames = 6 * Self.rate
        var clicks = [Float](repeating: 0, count: frames)
        for c in Self.clicks { clicks[Int(c)] = 0.5 }
        session.loopRange = Self.loopRange
        session.punchRange = Self.punchRange
        session.tracks = [
            Track(name: "Clicks", inputChannels: [2]),
            Track(name: "Vocal", inputChannels: [1], armed: true, monitoring: .off),
        ]
        try folder.create(session)
        try Signals.write([clicks], to: folder.absolutePath(of: "audio/clicks.wav"))
        session.tracks[0].regions = [Region(file: "audio/clicks.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]
        try folder.save(session)
        return path
    }

    /// Where each click that is in the Vocal take lies from its frame (take frame − timeline
    /// frame): the take's region (for a loop, pass `pass`'s), clicks inside it but clear of its
    /// edges' crossfades. A click in silence (frames an xrun lost) is left out.
    ///
    /// With `period`, so is a click Tapedeck played beside a loss it reported (a lost-input
    /// marker: from a period before it to a period after what it lost). What Tapedeck plays
    /// there is not on the timeline's frame by design: until JACK's clock says whether a gap
    /// was lost or only read early, JACKClockGaps holds the playhead where it was, so if
    /// frames were lost, what it plays meanwhile is late by them (a performer hears that as
    /// part of the dropout). By hand, on PipeWire at 64-frame periods with the cable stopped
    /// 3 ms every 30 ms (11 takes, 8 with audio): 8 clicks came back 64 to 192 frames late,
    /// every one beside a loss the take reported, the amounts the trace (TAPEDECK_JACK_TRACE)
    /// shows held for two or three cycles before each loss was told; all 39 clicks clear of
    /// one were on their frames.
    /// (A buffer the graph hands on again from a cycle it skipped would look the same; the
    /// two were not told apart.) What Tapedeck records beside a loss is held to the sample by
    /// a source on JACK's clock (`ServerStallTests`, `JACKCountInTests`, and the same stops of
    /// a sine source: 0 samples off their frame); a loss it did not report excuses nothing.
    private func clickOffsets(session: String, pass: Int?, period: Int64?) throws -> (offsets: [Int64], expected: Int, take: String) {
        let folder = SessionFolder(path: session)
        let loaded = try folder.load()
        let regions = loaded.tracks[1].regions.filter { $0.file.hasPrefix("audio/take-") }
        let region: Region
        if let pass {
            guard let r = regions.first(where: { $0.takeNumber == pass }) else {
                throw CellError(description: "no take of pass \(pass): \(regions.map { ($0.takeNumber ?? 0, $0.timelineStartFrame) })")
            }
            region = r
        } else {
            guard regions.count == 1, let r = regions.first else { throw CellError(description: "\(regions.count) takes on the Vocal track") }
            region = r
        }
        let samples = try Signals.read(folder.absolutePath(of: region.file)).channels[0]
        let beside: [Range<Int64>] = period.map { period in
            loaded.markers.filter(\.isLostInput).map { ($0.frame - period)..<($0.frame + Self.framesLost($0.name) + period) }
        } ?? []
        var offsets: [Int64] = []
        var inTake = 0
        for c in Self.clicks where c >= region.timelineStartFrame + 600 && c < region.timelineEndFrame - 600 {
            inTake += 1
            if beside.contains(where: { $0.contains(c) }) { continue }
            let expected = Int(c - region.timelineStartFrame + region.sourceOffsetFrame)
            let lo = max(0, expected - 1500), hi = min(samples.count, expected + 1500)
            guard hi > lo else { continue }
            var loudest = lo
            for i in lo..<hi where abs(samples[i]) > abs(samples[loudest]) { loudest = i }
            guard abs(samples[loudest]) > 0.1 else { continue }
            offsets.append(Int64(loudest - expected))
        }
        let peak = samples.map { abs($0) }.max() ?? 0
        let passed = inTake - offsets.count
        let take = "at \(region.timelineStartFrame)f for \(region.lengthFrames)f from \(region.sourceOffsetFrame)f of \(samples.count)f, peak \(peak); "
            + "\(passed) not judged, \(beside.count) losses told"
        return (offsets, inTake, take)
    }

    /// What a lost-input marker says was lost: `xrun: 512 frames lost`, `xrun: no frames lost`
    /// (TakeStamps.xrunName), `dropped 512` (frames a slow disk dropped).
    static func framesLost(_ name: String) -> Int64 {
        guard let match = name.firstMatch(of: /(?:xrun: |dropped )([0-9]+)/) else { return 0 }
        return Int64(match.1) ?? 0
    }
}
