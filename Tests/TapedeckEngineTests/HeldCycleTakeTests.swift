import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// Issue 39, item 4: a stall costs exactly what the device lost, at the frame it was lost,
/// and nothing lands out of place — also for a take that begins while the device is still
/// unsure whether it lost time (PipeWire's JACK runs missed cycles back to back after a stall,
/// and a count-in can end in one of them).
final class HeldCycleTakeTests: XCTestCase {
    private let period = 256

    /// An engine on one thread over a ``SteppedDevice`` whose input is ``XrunDevice/signal(_:)``,
    /// its graph one track hearing input 1; not started.
    private func prepared() throws -> (SteppedDevice, Engine) {
        let device = SteppedDevice(periodFrames: period, input: XrunDevice.signal)
        var options = EngineOptions()
        options.renderThreads = 1
        options.realtimePriority = false
        let engine = Engine(device: device, options: options)
        try engine.prepare(try Fixture.spec(playing: nil, inputs: [1]))
        return (device, engine)
    }

    /// Rolls an engine on a ``SteppedDevice`` (input: ``XrunDevice/signal(_:)``, so every kept
    /// sample says which device frame it was read at) with a take of input 1 from `recordPoint`;
    /// `around` runs when the next cycle crosses the record point (the device's doing), then
    /// 40 more cycles (the take of 8192 frames ends by then). Returns the take's samples and the true device
    /// frame of timeline frame 0.
    private func record(recordPoint: Int64, around: (SteppedDevice) -> Void) throws -> (take: [Float], zeroAt: Int64, xruns: [EngineEvent]) {
        let dir = try Fixture.temporaryFolder()
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        let (device, engine) = try prepared()
        let take = TakeRequest(track: 0, channelCount: 1, path: dir + "/take.wav", container: .wav, encoding: .float32)
        let set = try engine.startTakes([take], gate: TakeGate(recordPoint: recordPoint, maxFrames: 8192, latencyFrames: 0))
        engine.play()
        try engine.start()
        defer { device.stop(); engine.close() }
        var zeroAt: Int64 = -1
        for _ in 0..<2000 {
            device.cycle()
            let s = engine.status()
            guard s.transport == .rolling else { continue }
            // Nothing lost yet: the engine's device frame is the device's own.
            XCTAssertEqual(s.deviceFrame, device.trueFrame)
            zeroAt = s.deviceFrame - s.positionFrame
            if s.positionFrame + Int64(period) > recordPoint { break }
        }
        XCTAssertGreaterThanOrEqual(zeroAt, 0, "the transport rolled")
        around(device)
        for _ in 0..<40 { device.cycle() }
        engine.endTakes()
        for _ in 0..<4 { device.cycle() }
        XCTAssertTrue(set.hasEnded)
        let outcomes = engine.finish(set)
        XCTAssertNil(outcomes.first?.error)
        let xruns = engine.drainEvents().filter { $0.kind == .deviceXrun && $0.frames > 0 }
        return (try Fixture.readMono(take.path), zeroAt, xruns)
    }

    /// Every sample of the take is silence or the input read when its timeline frame played:
    /// take frame k is timeline frame `recordPoint + k`, played at true device frame
    /// `zeroAt + recordPoint + k`. Returns the silent frames.
    private func assertInPlace(_ take: [Float], recordPoint: Int64, zeroAt: Int64, file: StaticString = #filePath, line: UInt = #line) -> Int {
        var misplaced: [Int] = []
        for (k, s) in take.enumerated() where s != 0 && s != XrunDevice.signal(zeroAt + recordPoint + Int64(k)) {
            misplaced.append(k)
        }
        let first = misplaced.first.map { k -> String in
            let s = take[k]
            let read = (0..<Int64(4 * period)).map { zeroAt + recordPoint + Int64(k) + $0 - Int64(2 * period) }
                .first { XrunDevice.signal($0) == s }.map { "\($0 - (zeroAt + recordPoint + Int64(k)))" } ?? "?"
            return "take frame \(k) holds the input of \(read) frames from its own"
        }
        XCTAssertEqual(misplaced.count, 0, "misplaced samples; the first: \(first ?? "")", file: file, line: line)
        return take.filter { $0 == 0 }.count
    }

    /// The record point is crossed in a cycle the device holds; a period of device time was
    /// lost before it, told two cycles later. The take starts on its record point, and what
    /// it kept in the held cycles is silence (their clock was not trusted) with the lost
    /// period: nothing read in them is placed, nothing after them is early or late.
    func testATakeThatBeginsWhileTheDeviceHoldsHoldsFromItsFirstFrame() throws {
        let recordPoint: Int64 = 48000 + 100
        let lost = Int64(period)
        var crossedAt: Int64 = -1
        let run = try record(recordPoint: recordPoint) { device in crossedAt = device.stall(losing: lost) }
        XCTAssertEqual(run.take.count, 8192)
        let silent = assertInPlace(run.take, recordPoint: recordPoint, zeroAt: run.zeroAt)
        // Kept in the held cycles: from the record point to their end, at the engine's belief
        // (the lost period not yet moved through). Silence: that and the lost period.
        let engineCrossing = crossedAt - lost
        let keptInHold = engineCrossing + Int64(2 * period) - (run.zeroAt + recordPoint)
        XCTAssertEqual(Int64(silent), keptInHold + lost, "silence is what was lost and what was held")
        XCTAssertEqual(run.take.prefix(silent).filter { $0 != 0 }.count, 0, "the silence is the take's start")
        // Told where each lies on the timeline: the lost period where the hold began (before
        // the record point), what the take kept in the held cycles from its record point on.
        let holdBegan = engineCrossing - run.zeroAt
        XCTAssertEqual(run.xruns.map { [$0.frame, $0.frames] }, [[holdBegan, lost], [recordPoint + lost, keptInHold]])
    }

    /// The same stall while a take is well under way: the hold begins in it, as before.
    func testATakeUnderWayWhenTheDeviceHoldsLosesTheLostPeriodAndTheHeldCyclesInPlace() throws {
        let recordPoint: Int64 = 24000
        let lost = Int64(period)
        let run = try record(recordPoint: recordPoint) { device in
            for _ in 0..<20 { device.cycle() }
            device.stall(losing: lost)
        }
        XCTAssertEqual(run.take.count, 8192)
        let silent = assertInPlace(run.take, recordPoint: recordPoint, zeroAt: run.zeroAt)
        XCTAssertEqual(silent, 2 * period + Int(lost), "the two held cycles and the lost period")
        // The lost period where the hold began, the held cycles after it (as the take has them).
        let first = try XCTUnwrap(run.take.firstIndex(of: 0))
        XCTAssertEqual(run.take[first..<(first + silent)].filter { $0 != 0 }.count, 0, "one span")
        XCTAssertEqual(run.xruns.map { [$0.frame, $0.frames] },
                       [[recordPoint + Int64(first), lost], [recordPoint + Int64(first) + lost, Int64(2 * period)]])
    }

    /// An xrun told while the transport stands (ports patched before a take rolls, a server
    /// busy at start) moved no playhead: it is told as such, so no take that starts at that
    /// frame claims it; one told while rolling is not.
    func testAnXrunWhileTheTransportStandsIsToldAsCostingTheTimelineNothing() throws {
        let (device, engine) = try prepared()
        try engine.start()
        defer { device.stop(); engine.close() }
        for _ in 0..<4 { device.cycle() }
        device.lose(300)
        device.tellLost(300)
        device.cycle()
        XCTAssertEqual(engine.status().positionFrame, 0, "standing, the playhead stays")
        engine.play()
        for _ in 0..<400 where engine.status().transport != .rolling { device.cycle() }
        XCTAssertEqual(engine.status().transport, .rolling)
        device.cycle()
        let before = engine.status().positionFrame
        device.lose(500)
        device.tellLost(500)
        device.cycle()
        XCTAssertEqual(engine.status().positionFrame, before + 500 + Int64(period), "rolling, the playhead moves through the loss")
        let xruns = engine.drainEvents().filter { $0.kind == .deviceXrun }
        XCTAssertEqual(xruns.map { [$0.frame, $0.frames] }, [[0, 300], [before, 500]])
        XCTAssertEqual(xruns.map(\.whileStopped), [true, false])
    }
}
