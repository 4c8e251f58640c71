import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckTransport

/// A take's name is free in the session's `audio/` and in the mirror folder too (`record
/// --mirror`), so a mirror copy never meets a file of its name (an older session's take).
final class TakeNameTests: XCTestCase {
    func testATakeNameTakenInTheMirrorIsNotChosen() throws {
        let dir = NSTemporaryDirectory() + "td-names-\(getpid())-\(UUID().uuidString.prefix(6))"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(Session(sampleRate: 48000))
        let mirror = dir + "/mirror"
        try FileManager.default.createDirectory(atPath: mirror, withIntermediateDirectories: true)
        // Every name the next seconds could give, taken in the mirror (whole and as a first piece).
        let f = DateFormatter()
        f.dateFormat = "yyyyMMdd-HHmmss"
        f.locale = Locale(identifier: "en_US_POSIX")
        for s in -1...3 {
            let base = "take-" + f.string(from: Date().addingTimeInterval(Double(s)))
            for name in [base + ".wav", base + "-001.wav"] { FileManager.default.createFile(atPath: mirror + "/" + name, contents: Data()) }
        }
        let name = try XCTUnwrap(TakeFiles.freshNames(in: folder, tracks: [0], container: .wav, mirror: mirror).first)
        XCTAssertFalse(FileManager.default.fileExists(atPath: mirror + "/" + name), "\(name) is free in the mirror")
        XCTAssertTrue(name.hasSuffix("-2.wav"), "the next free name: \(name)")
        // Without a mirror the session's own free name is taken as ever.
        let plain = try XCTUnwrap(TakeFiles.freshNames(in: folder, tracks: [0], container: .wav).first)
        XCTAssertFalse(plain.hasSuffix("-2.wav"), plain)
    }
}
