import XCTest
import TapedeckCore
@testable import TapedeckDSP

/// A whole chain put in place (``ChainChange``): one undo step named by what was done, and
/// the places a chain cannot go refused with nothing changed.
final class ChainChangeTests: XCTestCase {
    private func session() -> Session {
        var s = Session(sampleRate: 48000)
        s.tracks = [Track(name: "Drums", playbackChain: "hpf:80,comp:-18,gain:-3"), Track.makeBus(name: "Verb", channelCount: 2)]
        return s
    }

    func testTheStepIsNamedByWhatWasDone() throws {
        var doc = SessionDocument(session: session())
        try doc.apply(ChainChange(place: .playback(strip: 0), chain: Chain(parsing: "hpf:80,gain:-3"), kind: .removeNode))
        try doc.apply(ChainChange(place: .playback(strip: 0), chain: Chain(parsing: "gain:-3,hpf:80"), kind: .reorder))
        try doc.apply(ChainChange(place: .playback(strip: 0), chain: Chain(parsing: "gain:-6,hpf:80")))
        try doc.apply(ChainChange(place: .input(strip: 0), chain: Chain(parsing: "gate:-50")))
        try doc.apply(ChainChange(place: .master, chain: Chain(parsing: "limiter:-1")))
        XCTAssertEqual(doc.undoNames, ["edit chain on master", "edit input chain on Drums", "edit chain on Drums",
                                       "reorder chain on Drums", "remove node on Drums"])
        XCTAssertEqual(doc.session.tracks[0].playbackChain, try Chain(parsing: "gain:-6,hpf:80").text, "stored as its canonical text")
        XCTAssertEqual(doc.session.tracks[0].inputChain, try Chain(parsing: "gate:-50").text)
    }

    func testABusInputAFrozenTrackAndAMissingStripAreRefused() throws {
        var s = session()
        s.tracks[0].frozen = FrozenAudio(file: "audio/freeze-Drums.wav", lengthFrames: 10)
        var doc = SessionDocument(session: s)
        let gain = try Chain(parsing: "gain:-1")
        XCTAssertThrowsError(try doc.apply(ChainChange(place: .playback(strip: 0), chain: gain))) {
            XCTAssertEqual("\($0)", "Drums is frozen: unfreeze it first (its regions and chain stay as they were rendered)")
        }
        XCTAssertThrowsError(try doc.apply(ChainChange(place: .input(strip: 1), chain: gain))) {
            XCTAssertTrue("\($0)".hasPrefix("Verb is a bus: it has no input"), "\($0)")
        }
        XCTAssertThrowsError(try doc.apply(ChainChange(place: .playback(strip: 5), chain: gain)))
        XCTAssertEqual(doc.session, s, "nothing changed")
        XCTAssertEqual(doc.undoNames, [])
        try doc.apply(ChainChange(place: .input(strip: 0), chain: gain))
        XCTAssertEqual(doc.undoNames, ["edit input chain on Drums"], "a frozen track's input chain still records")
    }
}
