import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// OSC on the real screen, through liblo's own tools: `oscsend` drives it, `oscdump` is a
/// surface that registered (`/set_surface` naming its port) and records what it is sent.
final class ScreenOSCTests: XCTestCase {
    private var folder = ""
    private var session = ""

    override func setUpWithError() throws {
        guard access("/usr/bin/oscsend", X_OK) == 0, access("/usr/bin/oscdump", X_OK) == 0 else {
            throw XCTSkip("liblo-tools (oscsend, oscdump) is not installed: make test-deps")
        }
        (folder, session) = try ScreenTmux.demoFolder(self)
    }

    /// A UDP port nothing listens on just now (bound to 0 and released).
    static func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length); return getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: a.sin_port))
    }

    private func oscsend(_ port: Int, _ path: String, _ types: String = "", _ args: String...) {
        let result = try? Tapedeck.run(["localhost", "\(port)", path] + (types.isEmpty ? [] : [types] + args), executable: "/usr/bin/oscsend")
        XCTAssertEqual(result?.status, 0, "oscsend \(path): \(result?.stderr ?? "did not run")")
    }

    private func line(_ text: String, containing name: String) -> String {
        text.split(separator: "\n").first { $0.contains(name) }.map(String.init) ?? ""
    }

    func testTransportPlayStartsAStripGainSetsTheFaderAndARegisteredSurfaceGetsNamesAndBoundedMeters() throws {
        let port = Self.freePort()
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline", "--osc", "\(port)"])
        screen.waitFor("STOPPED")

        // A surface: oscdump on its own port, registered with buttons, values, the master
        // section (transport) and meters, gain in dB.
        let surfacePort = Self.freePort()
        let dumpPath = folder + "/oscdump.txt"
        FileManager.default.createFile(atPath: dumpPath, contents: nil)
        let dump = Process()
        dump.executableURL = URL(fileURLWithPath: "/usr/bin/oscdump")
        dump.arguments = ["-L", "\(surfacePort)"]
        dump.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: dumpPath))
        dump.standardError = FileHandle.nullDevice
        try dump.run()
        defer { dump.terminate(); dump.waitUntilExit() }
        usleep(300_000) // oscdump binds its port
        oscsend(port, "/set_surface", "iiiiiii", "0", "15", "147", "0", "0", "0", "\(surfacePort)")

        oscsend(port, "/strip/gain", "if", "1", "-6.0")
        let shown = screen.waitFor("the fader at -6 dB") { self.line($0, containing: "Drums").contains("-6.0dB") }
        XCTAssertTrue(shown.contains("Drums fader -6.0 dB — asked by osc 127.0.0.1:"), shown)

        oscsend(port, "/transport_play")
        screen.waitFor("PLAYING")
        // Meters for 3 s of playing, counted over the middle 2 s.
        sleep(1)
        let startCount = meterCounts(dumpPath)
        sleep(2)
        let endCount = meterCounts(dumpPath)
        oscsend(port, "/transport_stop")
        screen.waitFor("STOPPED")

        let dumped = (try? String(contentsOfFile: dumpPath, encoding: .utf8)) ?? ""
        for (i, name) in ["Drums", "Bass", "Keys", "Vocal"].enumerated() {
            XCTAssertTrue(dumped.contains("/strip/name is \(i + 1) \"\(name)\""), "no name for strip \(i + 1):\n\(dumped.prefix(2000))")
        }
        XCTAssertTrue(dumped.contains("/strip/gain if 1 -6.0"), "the fader's move is fed back:\n\(dumped.prefix(2000))")
        XCTAssertTrue(dumped.contains("/transport_play f 1.0"), dumped.prefix(2000).description)
        var anyMeters = false
        for strip in 1...4 {
            let n = (endCount[strip] ?? 0) - (startCount[strip] ?? 0)
            if n > 0 { anyMeters = true }
            XCTAssertLessThanOrEqual(n, 2 * 20 + 1, "strip \(strip): \(n) meter updates in 2 s")
        }
        XCTAssertTrue(anyMeters, "meters while playing:\n\(dumped.suffix(2000))")
        XCTAssertTrue(screen.isRunning)
    }

    func testTenThousandMalformedDatagramsChangeNothingOnTheScreen() throws {
        let port = Self.freePort()
        let screen = try ScreenTmux(self, folder: folder, args: [session, "--device", "offline", "--osc", "\(port)"])
        let before = screen.waitFor("STOPPED")
        XCTAssertFalse(before.contains("demo.tapedeck *"))
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var to = sockaddr_in()
        to.sin_family = sa_family_t(AF_INET)
        to.sin_port = in_port_t(UInt16(port).bigEndian)
        to.sin_addr.s_addr = inet_addr("127.0.0.1")
        // /strip/gain 1 -6.0 as oscsend writes it, then cut, flipped, mistyped or random.
        let gain: [UInt8] = Array("/strip/gain".utf8) + [0] + Array(",if".utf8) + [0, 0, 0, 0, 1, 0xc0, 0xc0, 0, 0]
        var rng = SystemRandomNumberGenerator()
        for i in 0..<10_000 {
            var bytes: [UInt8]
            switch i % 4 {
            case 0: bytes = (0..<Int.random(in: 0...120, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1: bytes = Array(gain.prefix(Int.random(in: 0..<gain.count, using: &rng)))
            case 2 where i % 8 == 2: // a length that is not a multiple of four
                bytes = gain + (0..<Int.random(in: 1...3, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 2: // a type tag that is no number, or none liblo knows
                bytes = gain
                var tag = UInt8.random(in: 1...255, using: &rng)
                while "ifhd".utf8.contains(tag) { tag = UInt8.random(in: 1...255, using: &rng) }
                bytes[Int.random(in: 13...14, using: &rng)] = tag
            default: bytes = Array("/strip/gain".utf8) + [0] + Array(",ff".utf8) + [0, 0x7f, 0xc0, 0, 0, 0x7f, 0x80, 0, 0] // NaN, inf
            }
            _ = bytes.withUnsafeBytes { data in
                withUnsafePointer(to: &to) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                } }
            }
            if i % 500 == 0 { usleep(20_000) } // the socket's buffer is not a test of its size
        }
        sleep(1)
        XCTAssertTrue(screen.isRunning)
        let after = screen.capture()
        XCTAssertTrue(after.contains("STOPPED") && !after.contains("demo.tapedeck *"), after)
        XCTAssertEqual(try SessionFolder(path: session).load().tracks[0].gainDecibels, -5)
        // And it still answers.
        oscsend(port, "/strip/gain", "if", "1", "-6.0")
        screen.waitFor("the fader at -6 dB") { self.line($0, containing: "Drums").contains("-6.0dB") }
    }

    /// Meter lines per strip in oscdump's output so far.
    private func meterCounts(_ path: String) -> [Int: Int] {
        var counts: [Int: Int] = [:]
        // oscdump's lines: `TIMETAG /strip/meter if 1 -16.2`.
        for l in ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n") {
            let fields = l.split(separator: " ")
            if fields.count >= 4, fields[1] == "/strip/meter", let id = Int(fields[3]) { counts[id, default: 0] += 1 }
        }
        return counts
    }

    func testAPortInUseOrABadPortIsOneLineAndAFailedExit() throws {
        let held = HeldUDPPort()
        defer { withExtendedLifetime(held) {} }
        let busy = held.port
        for (port, expected) in [("\(busy)", "in use"), ("0", "not a UDP port"), ("70000", "not a UDP port"), ("abc", "not a UDP port")] {
            let r = try Tapedeck.run(["open", session, "--device", "offline", "--osc", port])
            XCTAssertNotEqual(r.status, 0, "--osc \(port)")
            XCTAssertTrue(r.stderr.contains(expected), "--osc \(port): \(r.stderr)")
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "--osc \(port): \(r.stderr)")
        }
    }
}
