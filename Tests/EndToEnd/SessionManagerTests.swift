import CLiblo
import Foundation
import XCTest
import TapedeckCore
import TapedeckIO

/// A stand-in for the New Session Manager: an OSC server over UDP (liblo) that records what
/// Tapedeck sends and sends what a manager would.
private final class NSMStandIn {
    struct Message {
        var path: String
        var strings: [String]
        var ints: [Int32]
    }

    private let server: UnsafeMutableRawPointer
    private(set) var messages: [Message] = []
    private var client: UnsafeMutableRawPointer?

    init() throws {
        guard let s = lo_server_new_with_proto(nil, LO_UDP, { _, _, _ in }) else { throw XCTSkip("liblo could not open a UDP port") }
        server = s
        lo_server_add_method(s, nil, nil, { path, types, argv, argc, message, data in
            let me = Unmanaged<NSMStandIn>.fromOpaque(data!).takeUnretainedValue()
            var m = Message(path: String(cString: path!), strings: [], ints: [])
            for i in 0..<Int(argc) {
                guard let arg = argv?[i] else { continue }
                switch UInt8(bitPattern: types![i]) {
                case UInt8(ascii: "s"): m.strings.append(String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self)))
                case UInt8(ascii: "i"): m.ints.append(arg.pointee.i)
                default: break
                }
            }
            if me.client == nil, let source = lo_message_get_source(message), let url = lo_address_get_url(source) {
                me.client = lo_address_new_from_url(url)
                free(url)
            }
            me.messages.append(m)
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let client { lo_address_free(client) }
        lo_server_free(server)
    }

    /// What Tapedeck is told to use as NSM_URL.
    var url: String { "osc.udp://127.0.0.1:\(lo_server_get_port(server))/" }

    /// Receives until a message to `path` has come (at most `timeout` s); it, or nil.
    func waitFor(_ path: String, timeout: Double = 10, after count: Int = 0) -> Message? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let m = messages.dropFirst(count).first(where: { $0.path == path }) { return m }
            _ = lo_server_recv_noblock(server, 50)
        }
        return messages.dropFirst(count).first { $0.path == path }
    }

    /// Sends `path` with string arguments to the client that announced itself.
    func send(_ path: String, _ strings: String...) {
        guard let client, let m = lo_message_new() else { return XCTFail("no client to send \(path) to") }
        for s in strings { lo_message_add_string(m, s) }
        lo_send_message_from(client, server, path, m)
        lo_message_free(m)
    }
}

final class SessionManagerTests: XCTestCase {
    /// Under a manager the screen announces itself, opens (creating) the project the manager
    /// names, its JACK client takes the manager's client id, unsaved changes are told, a save
    /// from the manager saves, and SIGTERM ends it without a question.
    func testUnderASessionManagerTheScreenAnnouncesOpensSavesAndTellsItsChanges() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let jack = try JackServer.start(self, folder: dir.path)
        let nsm = try NSMStandIn()
        var env = jack.environment
        env["NSM_URL"] = nsm.url
        env["XDG_RUNTIME_DIR"] = dir.path
        let screen = try ScreenTmux(self, folder: dir.path, args: [], environment: env, width: 120)

        let announce = try XCTUnwrap(nsm.waitFor("/nsm/server/announce"), "Tapedeck announced itself")
        XCTAssertEqual(announce.strings.first, "tapedeck", "the application name (its JACK client name without a manager)")
        XCTAssertEqual(announce.strings.dropFirst().first, ":dirty:message:")
        XCTAssertTrue(announce.strings.last?.hasSuffix("tapedeck") ?? false, "the executable it was started as")
        XCTAssertEqual(announce.ints.prefix(2), [1, 1], "NSM API 1.1")
        XCTAssertGreaterThan(announce.ints.last ?? 0, 0, "its pid")
        XCTAssertFalse(JackTools(jack).ports().contains { $0.hasPrefix("tapedeck") }, "no JACK client before the open")

        nsm.send("/reply", "/nsm/server/announce", "Welcome", "Test Session Manager", ":server-control:")
        let project = dir.path + "/song/tapedeck.nTEST"
        try FileManager.default.createDirectory(atPath: dir.path + "/song", withIntermediateDirectories: true)
        nsm.send("/nsm/client/open", project, "Tapedeck", "tapedeck.nTEST")
        let opened = try XCTUnwrap(nsm.waitFor("/reply"), "the open is answered")
        XCTAssertEqual(opened.strings.first, "/nsm/client/open")
        let folder = SessionFolder(path: project + ".tapedeck")
        XCTAssertTrue(folder.exists, "the project is created where the manager said")
        XCTAssertEqual(try folder.load().tracks.count, 0)
        screen.waitFor("tapedeck.nTEST")
        let ports = JackTools(jack).ports()
        XCTAssertTrue(ports.contains("tapedeck.nTEST:out_L"), "the JACK client is named as the manager said: \(ports)")
        let clean = nsm.messages.count

        screen.send("n")
        let dirty = nsm.waitFor("/nsm/client/is_dirty", after: clean)
        XCTAssertNotNil(dirty, "a new track is an unsaved change, and the manager hears of it")
        nsm.send("/nsm/client/save")
        let saved = try XCTUnwrap(nsm.waitFor("/reply", after: clean), "the save is answered")
        XCTAssertEqual(saved.strings, ["/nsm/client/save", "saved"])
        XCTAssertEqual(try folder.load().tracks.map(\.name), ["Track 1"], "saved to the project")
        XCTAssertNotNil(nsm.waitFor("/nsm/client/is_clean", after: clean), "and it is clean again")
        screen.waitFor("saved — asked by Test Session Manager")

        // A second open is refused: Tapedeck does not switch sessions.
        let before = nsm.messages.count
        nsm.send("/nsm/client/open", dir.path + "/other", "Tapedeck", "tapedeck.nOTHER")
        let refused = try XCTUnwrap(nsm.waitFor("/error", after: before))
        XCTAssertEqual(refused.strings.first, "/nsm/client/open")
        XCTAssertEqual(refused.ints, [-8], "ERR_NOT_NOW")

        // The manager quits its clients with SIGTERM: no question, even with changes unsaved.
        screen.send("n")
        _ = nsm.waitFor("/nsm/client/is_dirty", after: before)
        let pid = pid_t(announce.ints.last ?? 0)
        kill(pid, SIGTERM)
        for _ in 0..<500 where screen.isRunning { usleep(10_000) }
        XCTAssertFalse(screen.isRunning, "it quit")
        XCTAssertEqual(try folder.load().tracks.count, 1, "what the manager did not save is not saved")
    }

    func testWithoutNSMURLNothingIsAnnounced() throws {
        let dir = try Tapedeck.temporaryFolder(self)
        let nsm = try NSMStandIn()
        let screen = try ScreenTmux(self, folder: dir.path, args: ["--device", "offline"], environment: ["XDG_RUNTIME_DIR": dir.path])
        screen.waitFor("untitled")
        XCTAssertNil(nsm.waitFor("/nsm/server/announce", timeout: 1), "no manager, no announce")
    }
}

/// The private JACK server's ports, as `jack_lsp` lists them.
private struct JackTools {
    let server: JackServer
    init(_ server: JackServer) { self.server = server }

    func ports() -> [String] {
        let out = NSTemporaryDirectory() + "lsp-\(UUID().uuidString)"
        defer { unlink(out) }
        let child = try? SpawnedChild(["/usr/bin/jack_lsp"], environment: server.environment, stdoutPath: out)
        _ = child?.wait(timeoutSeconds: 10)
        return ((try? String(contentsOfFile: out, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }
}
