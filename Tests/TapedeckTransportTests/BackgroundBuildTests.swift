import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport
import TapedeckDevices

/// The screen's edits build their graph on a worker (issue 42 item 4): the edit returns at
/// once, the old graph plays until a later snapshot swaps the new one in, and a build made
/// meanwhile on the control thread is never overwritten by an older one from the worker.
final class BackgroundBuildTests: XCTestCase {
    private func transport(_ dir: String, seconds: Int) throws -> (Transport, Session) {
        let (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(48000 * seconds)])
        let device = OfflineClockDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256, capacityPeriods: 0, paced: true)
        return (try Transport(session: session, folder: folder, device: device, isOffline: true), session)
    }

    private func waitForBuild(_ t: Transport, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            if !t.snapshot().graphPending { return }
            usleep(5000)
        }
        XCTFail("the graph was never swapped in", file: file, line: line)
    }

    func testAStretchIsRenderedOnAWorkerAndSwappedInByALaterSnapshot() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (t, session) = try transport(dir, seconds: 20)
        defer { t.close() }
        var stretched = session
        stretched.tracks[0].regions[0].rate = 0.5
        stretched.tracks[0].regions[0].lengthFrames *= 2
        let asked = Date()
        t.followInBackground(session: stretched)
        let returned = Date().timeIntervalSince(asked)
        XCTAssertTrue(t.snapshot().graphPending, "the edit returned before the graph was built")
        XCTAssertEqual(t.spec.endFrame, 48000 * 20, "the old graph plays meanwhile")
        waitForBuild(t)
        // 20 s rendered with Rubber Band R3 take seconds (3 here). Measured against the
        // build's own time, so a busy machine slows both: the edit waited on none of it.
        let built = Date().timeIntervalSince(asked)
        XCTAssertLessThan(returned, built / 4, "the edit returned in \(returned) s, the build took \(built) s")
        XCTAssertEqual(t.spec.endFrame, 48000 * 40, "the stretched region's graph is in")
        XCTAssertTrue(t.spec.tracks[0].sources[0].path.contains("/cache/"), "it plays the render")
    }

    func testABuildOnTheControlThreadIsNeverReplacedByAnOlderOneFromTheWorker() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (t, session) = try transport(dir, seconds: 8)
        defer { t.close() }
        // A: the slow one (a stretch), on the worker. B: made at once on the control thread.
        var a = session
        a.tracks[0].regions[0].rate = 0.5
        a.tracks[0].regions[0].lengthFrames *= 2
        t.followInBackground(session: a)
        var b = session
        b.tracks.append(Track(name: "B", regions: session.tracks[0].regions))
        XCTAssertNil(t.follow(session: b))
        XCTAssertEqual(t.spec.tracks.map(\.name), ["t1", "B"])
        waitForBuild(t)
        XCTAssertEqual(t.spec.tracks.map(\.name), ["t1", "B"], "the worker's older graph was dropped")
        XCTAssertEqual(t.spec.endFrame, 48000 * 8)

        // Edits while a build runs are built together after it: the newest session wins.
        t.followInBackground(session: a)
        var c = a
        c.tracks[0].name = "C"
        t.followInBackground(session: c)
        waitForBuild(t)
        XCTAssertEqual(t.spec.tracks.map(\.name), ["C"])
        XCTAssertEqual(t.spec.endFrame, 48000 * 16)
    }

    func testUndoingAStretchStopsItsRenderAndTheUndoIsNotKeptWaiting() throws {
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (t, session) = try transport(dir, seconds: 20)
        defer { t.close() }
        let cache = dir + "/s.tapedeck/cache"
        var stretched = session
        stretched.tracks[0].regions[0].rate = 0.5
        stretched.tracks[0].regions[0].lengthFrames *= 2
        t.followInBackground(session: stretched)
        let started = Date().addingTimeInterval(30)
        while (t.snapshot().graphStretchProgress ?? 0) <= 0 && Date() < started { usleep(2000) }
        XCTAssertGreaterThan(t.snapshot().graphStretchProgress ?? 0, 0, "the render never began")
        // Undo: the render is wanted no more. It stops, and the undo's graph is in at once.
        let undone = Date()
        t.followInBackground(session: session)
        waitForBuild(t)
        let undoTook = Date().timeIntervalSince(undone)
        XCTAssertEqual(t.spec.endFrame, 48000 * 20, "the session as it was")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: cache)) ?? []
        XCTAssertEqual(left, [], "a stopped render leaves nothing in the cache")

        // The same render made whole, for scale: the undo waited on none of it.
        let whole = Date()
        t.followInBackground(session: stretched)
        waitForBuild(t)
        let renderTook = Date().timeIntervalSince(whole)
        XCTAssertEqual(t.spec.endFrame, 48000 * 40)
        XCTAssertLessThan(undoTook, renderTook / 3, "the undo took \(undoTook) s, a whole render \(renderTook) s")

        // A render the newest session still plays is not stopped: a second edit elsewhere
        // while it runs waits for it and keeps it.
        var again = stretched
        again.tracks[0].regions[0].rate = 0.25
        again.tracks[0].regions[0].lengthFrames *= 2
        t.followInBackground(session: again)
        var alsoMuted = again
        alsoMuted.tracks.append(Track(name: "B"))
        t.followInBackground(session: alsoMuted)
        waitForBuild(t)
        XCTAssertEqual(t.spec.endFrame, 48000 * 80, "rendered once, for both edits")
        XCTAssertEqual(t.spec.tracks.map(\.name), ["t1", "B"])
    }
}
