import XCTest
@testable import TapedeckRemote
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// The OSC address space (Ardour's), its validation, the socket's bind, a flood of malformed
/// datagrams, and the feedback's rate limit.
final class OSCServerTests: XCTestCase {
    private func parse(_ path: String, _ args: [OSCValue] = []) -> Result<OSCCommand, OSCRefusal> {
        OSCCommand.parse(OSCMessage(path, args))
    }

    private func command(_ path: String, _ args: [OSCValue] = [], file: StaticString = #filePath, line: UInt = #line) -> OSCCommand? {
        switch parse(path, args) {
        case .success(let c): return c
        case .failure(let r): XCTFail("\(path) refused: \(r)", file: file, line: line); return nil
        }
    }

    private func assertRefused(_ path: String, _ args: [OSCValue], file: StaticString = #filePath, line: UInt = #line) {
        if case .success(let c) = parse(path, args) { XCTFail("\(path) \(args) accepted as \(c)", file: file, line: line) }
    }

    func testEachAddressParses() {
        XCTAssertEqual(command("/transport_play"), .play)
        XCTAssertEqual(command("/transport_stop"), .stop)
        XCTAssertEqual(command("/toggle_roll"), .toggleRoll)
        XCTAssertEqual(command("/goto_start"), .gotoStart)
        XCTAssertEqual(command("/goto_end"), .gotoEnd)
        XCTAssertEqual(command("/locate", [.int(48000), .int(1)]), .locate(frame: 48000, roll: true))
        XCTAssertEqual(command("/locate", [.float(96000), .float(0)]), .locate(frame: 96000, roll: false))
        XCTAssertEqual(command("/locate", [.int64(5)]), .locate(frame: 5, roll: false))
        XCTAssertEqual(command("/rec_enable_toggle"), .recordToggle)
        XCTAssertEqual(command("/loop_toggle"), .loopToggle)
        XCTAssertEqual(command("/add_marker"), .addMarker(name: nil))
        XCTAssertEqual(command("/add_marker", [.string("Chorus")]), .addMarker(name: "Chorus"))
        XCTAssertEqual(command("/next_marker"), .nextMarker)
        XCTAssertEqual(command("/prev_marker"), .previousMarker)
        XCTAssertEqual(command("/refresh"), .refresh)
        XCTAssertEqual(command("/strip/list"), .stripList)
        XCTAssertEqual(command("/set_surface"), .setSurface(OSCSurfaceSettings()))
        XCTAssertEqual(command("/set_surface", [.int(0), .int(15), .int(3), .int(0), .int(0), .int(0), .int(9100)]),
                       .setSurface(OSCSurfaceSettings(stripTypes: .init(rawValue: 15), feedback: [.buttons, .values], faderMode: 0, replyPort: 9100)))
        XCTAssertEqual(command("/strip/gain", [.int(1), .float(-6)]), .stripGain(strip: .id(1), decibels: -6))
        XCTAssertEqual(command("/strip/gain", [.float(2), .int(3)]), .stripGain(strip: .id(2), decibels: 3))
        XCTAssertEqual(command("/strip/gain", [.int(1), .float(-500)]), .stripGain(strip: .id(1), decibels: -200))
        XCTAssertEqual(command("/strip/gain", [.int(1), .float(40)]), .stripGain(strip: .id(1), decibels: 12))
        XCTAssertEqual(command("/strip/fader", [.int(1), .float(0)]), .stripFader(strip: .id(1), decibels: -200))
        XCTAssertEqual(command("/strip/pan_stereo_position", [.int(3), .float(0)]), .stripPan(strip: .id(3), pan: -1))
        XCTAssertEqual(command("/strip/pan_stereo_position", [.int(3), .float(0.5)]), .stripPan(strip: .id(3), pan: 0))
        XCTAssertEqual(command("/strip/mute", [.int(1), .int(1)]), .stripMute(strip: .id(1), on: true))
        XCTAssertEqual(command("/strip/mute", [.int(1), .float(0)]), .stripMute(strip: .id(1), on: false))
        XCTAssertEqual(command("/strip/solo", [.int(2), .bool(true)]), .stripSolo(strip: .id(2), on: true))
        XCTAssertEqual(command("/strip/recenable", [.int(2), .float(1)]), .stripRecordEnable(strip: .id(2), on: true))
        XCTAssertEqual(command("/strip/send/gain", [.int(1), .int(2), .float(-3)]), .sendGain(strip: .id(1), send: 2, decibels: -3))
    }

    /// A TouchOSC button sends `f 1.0` on press and `f 0.0` on release; Ardour acts on the
    /// press only, and ignores any other float.
    func testButtonsActOnThePressOnlyAsArdourDoes() {
        let buttons: [(String, OSCCommand)] = [
            ("/transport_play", .play), ("/transport_stop", .stop), ("/toggle_roll", .toggleRoll), ("/goto_start", .gotoStart),
            ("/goto_end", .gotoEnd), ("/rec_enable_toggle", .recordToggle), ("/loop_toggle", .loopToggle),
            ("/next_marker", .nextMarker), ("/prev_marker", .previousMarker), ("/add_marker", .addMarker(name: nil)),
        ]
        for (path, expected) in buttons {
            XCTAssertEqual(command(path), expected, path)
            XCTAssertEqual(command(path, [.float(1)]), expected, "\(path) f 1.0")
            XCTAssertEqual(command(path, [.int(1)]), expected, "\(path) i 1")
            XCTAssertEqual(command(path, [.bool(true)]), expected, "\(path) T")
            for release in [OSCValue.float(0), .float(0.5), .float(-1), .float(2), .int(0), .bool(false)] {
                XCTAssertEqual(command(path, [release]), .ignored, "\(path) \(release)")
            }
        }
        XCTAssertEqual(command("/add_marker", [.string("Chorus")]), .addMarker(name: "Chorus"))
    }

    /// A layout with feedback bit 4 sends the strip number in the address, either place
    /// Ardour reads it; /master and /select name their strip by address.
    func testStripNumbersInTheAddressTheMasterAndTheSelectPageParse() {
        XCTAssertEqual(command("/strip/fader/3", [.float(0)]), .stripFader(strip: .id(3), decibels: -200))
        XCTAssertEqual(command("/strip/3/fader", [.float(0)]), .stripFader(strip: .id(3), decibels: -200))
        XCTAssertEqual(command("/strip/mute/2", [.float(1)]), .stripMute(strip: .id(2), on: true))
        XCTAssertEqual(command("/strip/mute/2", [.float(0.5)]), .stripMute(strip: .id(2), on: false))
        XCTAssertEqual(command("/strip/gain/1", [.float(-6)]), .stripGain(strip: .id(1), decibels: -6))
        XCTAssertEqual(command("/strip/pan_stereo_position/4", [.float(1)]), .stripPan(strip: .id(4), pan: 1))
        XCTAssertEqual(command("/master/gain", [.float(-3)]), .stripGain(strip: .master, decibels: -3))
        XCTAssertEqual(command("/master/fader", [.float(0)]), .stripFader(strip: .master, decibels: -200))
        XCTAssertEqual(command("/master/mute", [.int(1)]), .stripMute(strip: .master, on: true))
        XCTAssertEqual(command("/select/gain", [.float(-12)]), .stripGain(strip: .selected, decibels: -12))
        XCTAssertEqual(command("/select/mute", [.float(1)]), .stripMute(strip: .selected, on: true))
        XCTAssertEqual(command("/select/monitor_input", [.float(1)]), .stripMonitorInput(strip: .selected, on: true))
        XCTAssertEqual(command("/strip/monitor_input", [.int(2), .int(1)]), .stripMonitorInput(strip: .id(2), on: true))
        XCTAssertEqual(command("/strip/trimdB", [.int(2), .float(3)]), .stripTrim(strip: .id(2), decibels: 3))
        XCTAssertEqual(command("/strip/select", [.int(2), .float(1)]), .stripSelect(strip: 2))
        XCTAssertEqual(command("/strip/select/2", [.float(1)]), .stripSelect(strip: 2))
        XCTAssertEqual(command("/strip/select/2", [.float(0)]), .ignored)
        XCTAssertEqual(command("/bank_up", [.float(1)]), .bankUp)
        XCTAssertEqual(command("/bank_up", [.float(0)]), .ignored)
        XCTAssertEqual(command("/bank_down"), .bankDown)
        XCTAssertEqual(command("/set_bank", [.int(5)]), .setBank(5))
        XCTAssertEqual(command("/rewind", [.float(1)]), .rewind)
        XCTAssertEqual(command("/ffwd", [.float(1)]), .fastForward)
        XCTAssertEqual(command("/ffwd", [.float(0)]), .ignored)
        XCTAssertEqual(command("/set_surface", [.int(4), .int(7), .int(3), .int(1)]),
                       .setSurface(OSCSurfaceSettings(bankSize: 4, stripTypes: [.audioTracks, .midiTracks, .audioBuses], feedback: [.buttons, .values], faderMode: 1)))
        XCTAssertEqual(command("/strip/send/fader", [.int(1), .int(2), .float(0)]), .sendGain(strip: .id(1), send: 2, decibels: -200))
        XCTAssertEqual(command("/select/plugin", [.float(1)]), .selectPlugin(delta: 1))
        XCTAssertEqual(command("/select/plugin", [.float(-1)]), .selectPlugin(delta: -1))
        XCTAssertEqual(command("/select/plugin/parameter", [.int(2), .float(0.25)]), .pluginParameter(plugin: nil, parameter: 2, position: 0.25))
        XCTAssertEqual(command("/select/plugin/parameter", [.int(3), .int(2), .float(1)]), .pluginParameter(plugin: 3, parameter: 2, position: 1))
        XCTAssertEqual(command("/select/plugin/parameter/2", [.float(0.25)]), .pluginParameter(plugin: nil, parameter: 2, position: 0.25))
        XCTAssertEqual(command("/select/plugin/parameter/3/2", [.float(0.25)]), .pluginParameter(plugin: 3, parameter: 2, position: 0.25))
        assertRefused("/select/plugin/parameter", [.int(0), .float(0.5)])
        assertRefused("/select/plugin/parameter", [.int(1), .float(3)])
        assertRefused("/strip/fader/0", [.float(0.5)])
        assertRefused("/strip/fader/2", [])
        assertRefused("/set_bank", [.int(0)])
        assertRefused("/set_surface", [.int(-1)])
    }

    func testBadArgumentsAreRefused() {
        assertRefused("/strip/gain", [])
        assertRefused("/strip/gain", [.int(1)])
        assertRefused("/strip/gain", [.string("1"), .float(-6)])
        assertRefused("/strip/gain", [.int(1), .string("-6")])
        assertRefused("/strip/gain", [.int(1), .float(.nan)])
        assertRefused("/strip/gain", [.int(1), .float(.infinity)])
        assertRefused("/strip/gain", [.int(1), .double(-.infinity)])
        assertRefused("/strip/gain", [.int(0), .float(-6)])
        assertRefused("/strip/gain", [.int(-3), .float(-6)])
        assertRefused("/strip/gain", [.int(Int32.max), .float(-6)])
        assertRefused("/strip/gain", [.int64(Int64.max), .float(-6)])
        assertRefused("/strip/gain", [.float(1.5), .float(-6)])
        assertRefused("/strip/gain", [.double(1e300), .float(-6)])
        assertRefused("/strip/fader", [.int(1), .float(7)])
        assertRefused("/strip/fader", [.int(1), .float(.nan)])
        assertRefused("/strip/pan_stereo_position", [.int(1), .float(-2)])
        assertRefused("/strip/mute", [.int(1), .float(.nan)])
        assertRefused("/strip/mute", [.int(1), .string("on")])
        assertRefused("/strip/send/gain", [.int(1), .int(0), .float(0)])
        assertRefused("/locate", [.int(-1)])
        assertRefused("/locate", [.int64(Int64.max)])
        assertRefused("/locate", [.float(.nan), .int(1)])
        assertRefused("/set_surface", [.int(0), .int(0), .int(-1)])
        assertRefused("/set_surface", [.int(0), .int(0), .int(0), .int(9)])
        assertRefused("/set_surface", [.int(0), .int(0), .int(0), .int(0), .int(0), .int(0), .int(70000)])
        assertRefused("/strip/nonsense", [.int(1)])
        assertRefused("/", [])
    }

    func testFaderLawIsArdours() {
        XCTAssertEqual(OSCLaw.decibels(position: 1), 6.02, accuracy: 0.01)
        XCTAssertEqual(OSCLaw.position(decibels: 0), 0.782, accuracy: 0.001)
        XCTAssertEqual(OSCLaw.decibels(position: OSCLaw.position(decibels: -6)), -6, accuracy: 1e-9)
        XCTAssertEqual(OSCLaw.position(decibels: -200), 0)
    }

    func testPacketsRoundTripThroughLiblo() {
        let m = OSCMessage("/strip/name", [.int(3), .string("Vocal"), .float(-6.5), .int64(1 << 40), .double(0.25), .bool(true)])
        let bytes = OSCPacket.encode(m)!
        XCTAssertEqual(OSCPacket.decode(bytes), [m])
        // A bundle of two messages, one nested.
        let a = OSCPacket.encode(OSCMessage("/transport_play"))!, b = OSCPacket.encode(OSCMessage("/strip/mute", [.int(1), .int(1)]))!
        func element(_ e: [UInt8]) -> [UInt8] { withUnsafeBytes(of: UInt32(e.count).bigEndian, Array.init) + e }
        let inner = Array("#bundle".utf8) + [0] + [UInt8](repeating: 0, count: 8) + element(b)
        let bundle = Array("#bundle".utf8) + [0] + [UInt8](repeating: 0, count: 8) + element(a) + element(inner)
        XCTAssertEqual(OSCPacket.decode(bundle).map(\.path), ["/transport_play", "/strip/mute"])
    }

    // MARK: - The socket

    private func udpSocket() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        var tv = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        return fd
    }

    private func send(_ fd: Int32, _ bytes: [UInt8], to host: String = "127.0.0.1", port: Int) {
        var a = sockaddr_in()
        a.sin_family = sa_family_t(AF_INET)
        a.sin_port = in_port_t(UInt16(port).bigEndian)
        a.sin_addr.s_addr = inet_addr(host)
        _ = bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(fd, data.baseAddress, data.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            } }
        }
    }

    private func localPort(_ fd: Int32) -> Int {
        var a = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &a) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: a.sin_port))
    }

    /// Everything the server has within `seconds`.
    private func drain(_ server: OSCServer, seconds: Double = 0.5) -> [OSCServer.Request] {
        var all: [OSCServer.Request] = []
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            var fds = server.pollDescriptors
            _ = poll(&fds, 1, 50)
            all += server.receive()
        }
        return all
    }

    func testBoundToLoopbackByDefault() throws {
        let server = try OSCServer(port: 0)
        XCTAssertFalse(server.listensBeyondThisMachine)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(server.pollDescriptors[0].fd, $0, &length) } }
        XCTAssertEqual(String(cString: inet_ntoa(bound.sin_addr)), "127.0.0.1")
        // To this machine's other address the datagram finds no one listening.
        let client = udpSocket()
        defer { close(client) }
        if let other = Self.otherAddress() {
            send(client, OSCPacket.encode(OSCMessage("/transport_play"))!, to: other, port: server.port)
            XCTAssertTrue(drain(server, seconds: 0.3).isEmpty, "a datagram to \(other) reached the loopback-only server")
        }
        send(client, OSCPacket.encode(OSCMessage("/transport_play"))!, port: server.port)
        XCTAssertEqual(drain(server).compactMap { try? $0.command.get() }, [.play])
        XCTAssertTrue(try OSCServer(port: 0, address: "0.0.0.0").listensBeyondThisMachine)
    }

    /// A non-loopback IPv4 address of this machine, if it has one.
    static func otherAddress() -> String? {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0 else { return nil }
        defer { freeifaddrs(list) }
        var at = list
        while let i = at {
            if let a = i.pointee.ifa_addr, Int32(a.pointee.sa_family) == AF_INET {
                let text = a.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { String(cString: inet_ntoa($0.pointee.sin_addr)) }
                if !text.hasPrefix("127.") { return text }
            }
            at = i.pointee.ifa_next
        }
        return nil
    }

    func testBadPortsAndAddressesAreOneLine() throws {
        let first = try OSCServer(port: 0)
        XCTAssertThrowsError(try OSCServer(port: first.port)) { XCTAssertTrue("\($0)".contains("in use"), "\($0)") }
        XCTAssertThrowsError(try OSCServer(port: 70000)) { XCTAssertTrue("\($0)".contains("1…65535"), "\($0)") }
        XCTAssertThrowsError(try OSCServer(port: 0, address: "not an address")) { XCTAssertTrue("\($0)".contains("numeric"), "\($0)") }
        XCTAssertThrowsError(try OSCServer(port: 0, address: "192.0.2.1")) { XCTAssertTrue("\($0)".contains("not one of this machine"), "\($0)") }
    }

    func testTenThousandMalformedDatagramsCrashNothing() throws {
        let server = try OSCServer(port: 0)
        let client = udpSocket()
        defer { close(client) }
        var rng = SystemRandomNumberGenerator()
        let valid = [OSCMessage("/strip/gain", [.int(1), .float(-6)]), OSCMessage("/locate", [.int(48000), .int(1)]),
                     OSCMessage("/set_surface", [.int(0), .int(15), .int(2)])].map { OSCPacket.encode($0)! }
        var accepted: [OSCCommand] = []
        for i in 0..<10_000 {
            var bytes: [UInt8]
            switch i % 5 {
            case 0: bytes = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            case 1: // a valid message cut short
                let v = valid[i % valid.count]
                bytes = Array(v.prefix(Int.random(in: 0..<v.count, using: &rng)))
            case 2: // a valid message with bytes flipped (its type tags and lengths too)
                bytes = valid[i % valid.count]
                for _ in 0..<3 { bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng) }
            case 3: // a bundle claiming more than it holds, or nested too deep
                bytes = Array("#bundle".utf8) + [0] + [UInt8](repeating: 0, count: 8) + [0x7f, 0xff, 0xff, 0xfc] + valid[0]
            default: // an address with a wrong or unknown type tag
                bytes = Array("/strip/gain".utf8) + [0] + Array(",i\(Character(UnicodeScalar(UInt8.random(in: 32...126, using: &rng))))".utf8) + [0, 0, 0, 0, 1, 0x7f, 0xc0, 0, 0]
            }
            send(client, bytes, port: server.port)
            if i % 200 == 0 { accepted += server.receive().compactMap { try? $0.command.get() } }
        }
        accepted += drain(server).compactMap { try? $0.command.get() }
        // Whatever got through is a checked command: no NaN, no strip 0, nothing out of range.
        for c in accepted {
            switch c {
            case .stripGain(.id(let s), let db), .stripFader(.id(let s), let db): XCTAssertTrue(db.isFinite && s >= 1)
            case .locate(let f, _): XCTAssertTrue(f >= 0)
            default: break
            }
        }
        // And the server still answers.
        send(client, OSCPacket.encode(OSCMessage("/transport_stop"))!, port: server.port)
        XCTAssertEqual(drain(server).compactMap { try? $0.command.get() }.last, .stop)
    }

    // MARK: - Feedback

    func testRegisteredSurfaceGetsNamesAndAtMostTwentyMetersASecond() throws {
        let server = try OSCServer(port: 0)
        let surface = udpSocket()
        defer { close(surface) }
        let feedback = OSCFeedback(server: server)
        send(surface, OSCPacket.encode(OSCMessage("/set_surface"))!, port: server.port)
        let registration = drain(server).first { if case .success(.setSurface) = $0.command { true } else { false } }
        let peer = try XCTUnwrap(registration?.peer)
        XCTAssertEqual(peer.port, localPort(surface))
        feedback.register(peer, settings: OSCSurfaceSettings(), now: 0)
        var session = Session(sampleRate: 48000)
        session.tracks = ["Drums", "Bass"].map { Track(name: $0, inputChannels: [1], armed: false, monitoring: .off) }
        for t in 0..<2 { session.tracks[t].gainDecibels = -6 }
        // 2 s of a loop running every 5 ms with meters that always move.
        var t = 0.0
        var received: [OSCMessage] = []
        while t <= 2.0 {
            let view = OSCView(session: session, transport: OSCTransport(rolling: true, recording: false, loop: false, frame: Int64(t * 48000), sampleRate: 48000),
                               meters: [-20 + sin(t * 50) * 10, -30 + cos(t * 40) * 10], endFrame: 0, stopEnds: false)
            feedback.update(view, now: t)
            t += 0.005
            received += receiveAll(surface)
        }
        received += receiveAll(surface)
        XCTAssertTrue(received.contains(OSCMessage("/strip/name", [.int(1), .string("Drums")])))
        XCTAssertTrue(received.contains(OSCMessage("/strip/name", [.int(2), .string("Bass")])))
        XCTAssertTrue(received.contains(OSCMessage("/strip/gain", [.int(1), .float(-6)])))
        XCTAssertTrue(received.contains(OSCMessage("/transport_play", [.float(1)])))
        for id in [1, 2] {
            let meters = received.filter { $0.path == "/strip/meter" && $0.arguments.first == .int(Int32(id)) }.count
            XCTAssertGreaterThan(meters, 10, "strip \(id)")
            XCTAssertLessThanOrEqual(meters, 41, "strip \(id): \(meters) meter updates in 2 s")
        }
        XCTAssertLessThanOrEqual(received.filter { $0.path == "/position/samples" }.count, 41)
    }

    private func receiveAll(_ fd: Int32) -> [OSCMessage] {
        var out: [OSCMessage] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if n <= 0 { return out }
            out += OSCPacket.decode(Array(buffer[0..<n]))
        }
    }
}
