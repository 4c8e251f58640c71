import Foundation
import XCTest
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// What a session refers to, for the write guard: its regions and the files its chains name,
/// the chains taken as their owner read them (issue 42 item 3), never read again here.
final class SessionReferencesTests: XCTestCase {
    private var dir = ""

    override func setUpWithError() throws {
        dir = NSTemporaryDirectory() + "refs-\(UUID().uuidString).tapedeck"
        try FileManager.default.createDirectory(atPath: dir + "/samples", withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: dir + "/samples/kick.wav", contents: Data([0])))
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(atPath: dir) }

    private var session: Session {
        var s = Session()
        s.tracks = [Track(name: "Drums", playbackChain: "sampler:file=samples/kick.wav",
                          regions: [Region(file: "audio/take.wav", timelineStartFrame: 0, lengthFrames: 480)])]
        return s
    }

    func testARegionAndAFileAChainNamesAreReferenced() {
        let folder = SessionFolder(path: dir)
        let paths = SessionReferences.paths(of: session, folder: folder)
        XCTAssertTrue(paths.contains(dir + "/audio/take.wav"), "\(paths)")
        XCTAssertTrue(paths.contains(dir + "/samples/kick.wav"), "\(paths)")
        XCTAssertEqual(Set(SessionReferences.protected(session, folder: folder, chains: SessionChains(session)).referenced), Set(paths),
                       "the write guard protects the same files")
    }

    func testTheChainsAreTheOwnersAsItReadThem() {
        // An owner whose registry knows no sampler holds the chain as refused: it names no
        // file. Reading the text again (the standard registry) would find one.
        let owner = SessionChains(session, registry: NodeRegistry(types: []))
        let paths = SessionReferences.paths(of: session, folder: SessionFolder(path: dir), chains: owner)
        XCTAssertEqual(paths, [dir + "/audio/take.wav"])
    }
}
