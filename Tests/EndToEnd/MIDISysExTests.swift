import Foundation
import XCTest

/// SysEx through the built binary (issue 29 item 6): a `.mid` written here byte by byte is
/// imported into a session and exported with `export --midi`, and the export is walked here
/// chunk by chunk (not with Tapedeck's reader): every SysEx comes back byte for byte at its tick.
final class MIDISysExTests: XCTestCase {
    /// A SysEx event as a file holds it: tick, 0xF0 or 0xF7, and the bytes after the length.
    private struct SysEx: Equatable, CustomStringConvertible {
        var tick: Int
        var status: UInt8
        var data: [UInt8]
        var description: String { "tick \(tick) 0x\(String(status, radix: 16)) \(data.count) bytes" }
    }

    // MARK: - A writer and a reader of our own

    private func vlq(_ value: Int) -> [UInt8] {
        var v = value
        var out: [UInt8] = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 { out.insert(UInt8(v & 0x7F) | 0x80, at: 0); v >>= 7 }
        return out
    }

    private func be(_ value: Int, _ count: Int) -> [UInt8] { (0..<count).reversed().map { UInt8((value >> (8 * $0)) & 0xFF) } }

    /// One `MTrk` of `events` (absolute tick, bytes after the delta), in tick order, ended.
    private func track(_ events: [(tick: Int, bytes: [UInt8])]) -> [UInt8] {
        var body: [UInt8] = [], last = 0
        for e in events {
            body += vlq(e.tick - last) + e.bytes
            last = e.tick
        }
        body += [0x00, 0xFF, 0x2F, 0x00]
        return Array("MTrk".utf8) + be(body.count, 4) + body
    }

    /// Every SysEx of every track of the file at `path`, walked by hand: chunks, deltas,
    /// running status, meta and channel messages skipped.
    private func sysExEvents(_ path: String) throws -> (division: Int, events: [SysEx]) {
        let b = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        XCTAssertEqual(Array(b[0..<4]), Array("MThd".utf8))
        let division = Int(b[12]) << 8 | Int(b[13])
        var at = 8 + (Int(b[4]) << 24 | Int(b[5]) << 16 | Int(b[6]) << 8 | Int(b[7]))
        var out: [SysEx] = []
        func readVLQ() -> Int {
            var v = 0
            while true { let c = b[at]; at += 1; v = v << 7 | Int(c & 0x7F); if c & 0x80 == 0 { return v } }
        }
        while at + 8 <= b.count {
            let tag = String(decoding: b[at..<at + 4], as: UTF8.self)
            let length = Int(b[at + 4]) << 24 | Int(b[at + 5]) << 16 | Int(b[at + 6]) << 8 | Int(b[at + 7])
            at += 8
            let end = at + length
            guard tag == "MTrk" else { at = end; continue }
            var tick = 0, running: UInt8 = 0
            while at < end {
                tick += readVLQ()
                var status = b[at]
                if status < 0x80 { status = running } else { at += 1 }
                switch status {
                case 0xFF:
                    at += 1
                    let n = readVLQ(); at += n
                case 0xF0, 0xF7:
                    let n = readVLQ()
                    out.append(SysEx(tick: tick, status: status, data: Array(b[at..<at + n])))
                    at += n
                default:
                    running = status
                    at += status & 0xF0 == 0xC0 || status & 0xF0 == 0xD0 ? 1 : 2
                }
            }
            at = end
        }
        return (division, out)
    }

    /// The SysEx the test file holds (480 ticks a quarter): a GM reset at 0 in the conductor
    /// track, an XG reset at 0 and a 200-byte dump (its length two VLQ bytes) at 240 in the
    /// note track, and a message sent as an F0 packet at 1200 and its F7 continuation at 1210.
    private let expected: [SysEx] = {
        let dump: [UInt8] = [0x43, 0x00, 0x7E] + (0..<196).map { UInt8($0 % 128) } + [0xF7]
        return [
            SysEx(tick: 0, status: 0xF0, data: [0x7E, 0x7F, 0x09, 0x01, 0xF7]),
            SysEx(tick: 0, status: 0xF0, data: [0x43, 0x10, 0x4C, 0x00, 0x00, 0x7E, 0x00, 0xF7]),
            SysEx(tick: 240, status: 0xF0, data: dump),
            SysEx(tick: 1200, status: 0xF0, data: [0x41, 0x10, 0x42, 0x12]),
            SysEx(tick: 1210, status: 0xF7, data: [0x40, 0x00, 0x7F, 0x00, 0x41, 0xF7]),
        ]
    }()

    /// Writes the format-1 test file (tempo 120, a conductor track and a note track).
    private func writeSource(_ path: String) throws {
        func sx(_ e: SysEx) -> (tick: Int, bytes: [UInt8]) { (e.tick, [e.status] + vlq(e.data.count) + e.data) }
        XCTAssertGreaterThan(expected[2].data.count, 127, "one length must take two VLQ bytes")
        let conductor = track([(0, [0xFF, 0x51, 0x03, 0x07, 0xA1, 0x20]), sx(expected[0])])
        let notes = track([(0, [0xFF, 0x03, 0x04] + Array("Lead".utf8)), sx(expected[1]),
                           (0, [0x90, 60, 100]), sx(expected[2]), (480, [0x80, 60, 0]),
                           (960, [0x90, 64, 90]), sx(expected[3]), sx(expected[4]), (1440, [0x80, 64, 0]),
                           (1920, [0xB0, 7, 100])])
        let header = Array("MThd".utf8) + be(6, 4) + be(1, 2) + be(2, 2) + be(480, 2)
        try Data(header + conductor + notes).write(to: URL(fileURLWithPath: path))
    }

    func testAMIDIFileWithSysExRoundTripsItByteForByte() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let source = dir.appendingPathComponent("sysex.mid").path
        try writeSource(source)
        // The walk agrees with the writer before it judges Tapedeck.
        XCTAssertEqual(try sysExEvents(source).events, expected)

        let session = dir.appendingPathComponent("s.tapedeck").path
        XCTAssertEqual(try Tapedeck.run(["new", session]).status, 0)
        let imported = try Tapedeck.run(["import", session, source])
        XCTAssertEqual(imported.status, 0, imported.stderr)
        XCTAssertTrue(imported.stdout.contains("SysEx"), "the import says it kept SysEx: \(imported.stdout)")
        let back = dir.appendingPathComponent("back.mid").path
        let exported = try Tapedeck.run(["export", session, "--midi", "-o", back])
        XCTAssertEqual(exported.status, 0, exported.stderr)
        XCTAssertTrue(exported.stdout.contains("5 SysEx"), exported.stdout)

        let out = try sysExEvents(back)
        XCTAssertEqual(out.division, 960)
        // 960 ticks a quarter where the source had 480: every tick doubles. Tracks may come
        // back in another order, so the comparison is by tick (stable within a track).
        let scaled = expected.map { SysEx(tick: $0.tick * 2, status: $0.status, data: $0.data) }
        XCTAssertEqual(out.events.count, scaled.count, "\(out.events)")
        for e in scaled { XCTAssertTrue(out.events.contains(e), "missing \(e) in \(out.events)") }
        // The F0 packet comes before its continuation.
        let packet = out.events.firstIndex(of: scaled[3]), continuation = out.events.firstIndex(of: scaled[4])
        XCTAssertNotNil(packet)
        XCTAssertLessThan(packet ?? 0, continuation ?? -1)

        // --range cuts SysEx as it cuts notes: 12000-48000 frames is ticks 240-960 at 480
        // (50 frames a tick at 120 BPM and 48 kHz): only the dump, moved to the range's start.
        let part = dir.appendingPathComponent("part.mid").path
        let ranged = try Tapedeck.run(["export", session, "--midi", "-o", part, "--range", "12000f-48000f"])
        XCTAssertEqual(ranged.status, 0, ranged.stderr)
        XCTAssertEqual(try sysExEvents(part).events, [SysEx(tick: 0, status: 0xF0, data: expected[2].data)])
    }
}
