import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// Recording at the very end of the timeline (2^40 frames): a take stops there and is placed
/// up to it; a record point past it is refused and the session is left as it was. (Before,
/// such a take was recorded whole, could never be placed, and its marker made every later
/// command on the session fail.)
final class TimelineEndRecordTests: XCTestCase {
    private let limit = SessionLimits.maximumTimelineFrames

    func testATakeNearTheEndStopsThereAndIsPlacedUpToIt() throws {
        let folder = SessionFolder(path: try Tapedeck.temporaryFolder(self).appendingPathComponent("end.tapedeck").path)
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        let r = try Tapedeck.run(["record", folder.path, "--at", "\(limit - 4800)f", "--duration", "1", "--device", "filetap"],
                                 environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 0, r.stderr)
        let region = try XCTUnwrap(try folder.load().tracks.first?.regions.first, "the take is on its track")
        XCTAssertEqual(region.timelineStartFrame, limit - 4800)
        XCTAssertEqual(region.timelineEndFrame, limit, "it stops at the end of the timeline")
        XCTAssertFalse(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder).contains { $0.hasSuffix(".recording") })
        // The session still opens for everything else.
        XCTAssertEqual(try Tapedeck.run(["info", folder.path]).status, 0)
    }

    func testARecordPointPastTheEndIsRefusedAndChangesNothing() throws {
        let folder = SessionFolder(path: try Tapedeck.temporaryFolder(self).appendingPathComponent("end.tapedeck").path)
        XCTAssertEqual(try Tapedeck.run(["new", folder.path]).status, 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: folder.sessionFile))
        let r = try Tapedeck.run(["record", folder.path, "--at", "\(limit)f", "--duration", "1", "--device", "filetap"],
                                 environment: RecordSupport.environment)
        XCTAssertEqual(r.status, 64, r.stderr)
        XCTAssertTrue(r.stderr.contains("the record point is at the end of the timeline"), r.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: folder.sessionFile)), before, "no track was added for a take that never started")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.audioFolder), [], "no take file, no claim left behind")
    }
}
