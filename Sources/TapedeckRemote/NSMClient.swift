import CLiblo
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Tapedeck under the New Session Manager (NSM): OSC over UDP, through liblo, to the address
/// in `NSM_URL`. It announces itself, opens the session the manager names (once: Tapedeck
/// does not switch), saves when told, and says when it has unsaved changes. Like the control
/// socket it owns no thread: the front-end waits on ``pollDescriptors`` and calls
/// ``receive()`` from its own loop, so every request is carried out on the UI thread.
///
/// See https://new-session-manager.jackaudio.org/api/ (API 1.1).
public final class NSMClient {
    /// What the manager said.
    public enum Event: Equatable, Sendable {
        /// The manager accepted the announce: Tapedeck is under session management.
        case announced(manager: String)
        /// The manager refused the announce.
        case refused(code: Int32, message: String)
        /// Open (or create) the project at `path` (a prefix: Tapedeck adds `.tapedeck`); the
        /// JACK client is to be called `clientID`.
        case open(path: String, displayName: String, clientID: String)
        /// Save now.
        case save
        /// Every client of the session is loaded.
        case sessionIsLoaded
    }

    /// The NSM error codes Tapedeck answers with.
    public enum ErrorCode: Int32 {
        case general = -1
        case noSuchFile = -5
        case notNow = -8
        case badProject = -9
        case createFailed = -10
    }

    /// The application name (and, without NSM, Tapedeck's JACK client name).
    public static let applicationName = "tapedeck"
    /// What Tapedeck can do: tell its unsaved changes, send status messages.
    public static let capabilities = ":dirty:message:"

    private let server: UnsafeMutableRawPointer
    private let manager: UnsafeMutableRawPointer
    private var events: [Event] = []
    private var saidDirty: Bool?

    /// A client for the manager at `url` (`osc.udp://host:port/`); nil when the URL is not
    /// one liblo can reach (then Tapedeck runs without session management, as NSM asks).
    public init?(url: String) {
        guard let manager = lo_address_new_from_url(url) else { return nil }
        // UDP, any free port, errors kept quiet (liblo prints them on stderr otherwise).
        guard let server = lo_server_new_with_proto(nil, LO_UDP, { _, _, _ in }) else {
            lo_address_free(manager)
            return nil
        }
        self.server = server
        self.manager = manager
        let me = Unmanaged.passUnretained(self).toOpaque()
        lo_server_add_method(server, "/reply", nil, NSMClient.onReply, me)
        lo_server_add_method(server, "/error", nil, NSMClient.onError, me)
        lo_server_add_method(server, "/nsm/client/open", "sss", NSMClient.onOpen, me)
        lo_server_add_method(server, "/nsm/client/save", "", NSMClient.onSave, me)
        lo_server_add_method(server, "/nsm/client/session_is_loaded", "", NSMClient.onLoaded, me)
    }

    /// The client for `NSM_URL` when it is set.
    public static func fromEnvironment() -> NSMClient? {
        guard let url = ProcessInfo.processInfo.environment["NSM_URL"], !url.isEmpty else { return nil }
        return NSMClient(url: url)
    }

    deinit {
        lo_server_free(server)
        lo_address_free(manager)
    }

    /// `/nsm/server/announce s:name s:capabilities s:executable i:1 i:1 i:pid`.
    public func announce(executable: String) {
        send("/nsm/server/announce") { m in
            lo_message_add_string(m, NSMClient.applicationName)
            lo_message_add_string(m, NSMClient.capabilities)
            lo_message_add_string(m, executable)
            lo_message_add_int32(m, 1)
            lo_message_add_int32(m, 1)
            lo_message_add_int32(m, getpid())
        }
    }

    /// The socket to wait on.
    public var pollDescriptors: [pollfd] { [pollfd(fd: lo_server_get_socket_fd(server), events: Int16(POLLIN), revents: 0)] }

    /// What arrived within `milliseconds` (0: only what is there already). UI thread.
    public func receive(milliseconds: Int = 0) -> [Event] {
        var wait = Int32(milliseconds)
        while lo_server_recv_noblock(server, wait) > 0 { wait = 0 }
        defer { events = [] }
        return events
    }

    /// `/reply PATH MESSAGE`: `path` (`/nsm/client/open`, `/nsm/client/save`) was done.
    public func reply(to path: String, _ message: String) {
        send("/reply") { m in
            lo_message_add_string(m, path)
            lo_message_add_string(m, message)
        }
    }

    /// `/error PATH CODE MESSAGE`: `path` could not be done.
    public func fail(_ path: String, code: ErrorCode, _ message: String) {
        send("/error") { m in
            lo_message_add_string(m, path)
            lo_message_add_int32(m, code.rawValue)
            lo_message_add_string(m, message)
        }
    }

    /// Tells the manager whether there are unsaved changes (only when that changed).
    public func setDirty(_ dirty: Bool) {
        guard dirty != saidDirty else { return }
        saidDirty = dirty
        send(dirty ? "/nsm/client/is_dirty" : "/nsm/client/is_clean") { _ in }
    }

    /// `/nsm/client/message i:priority s:text`, for the manager to show (priority 0…3).
    public func message(_ text: String, priority: Int32 = 1) {
        send("/nsm/client/message") { m in
            lo_message_add_int32(m, min(max(priority, 0), 3))
            lo_message_add_string(m, text)
        }
    }

    /// Sends from the client's own socket (the manager answers to it).
    private func send(_ path: String, _ fill: (UnsafeMutableRawPointer) -> Void) {
        guard let m = lo_message_new() else { return }
        fill(m)
        lo_send_message_from(manager, server, path, m)
        lo_message_free(m)
    }

    // MARK: - liblo's handlers (called inside receive(), on the caller's thread)

    private static func client(_ data: UnsafeMutableRawPointer?) -> NSMClient {
        Unmanaged<NSMClient>.fromOpaque(data!).takeUnretainedValue()
    }

    /// The string argument `i` (liblo lays a string out where its `lo_arg` points).
    private static func string(_ argv: UnsafeMutablePointer<UnsafeMutablePointer<lo_arg>?>?, _ types: UnsafePointer<CChar>?,
                               _ i: Int) -> String? {
        guard let types, let argv, strlen(types) > i, types[i] == CChar(UInt8(ascii: "s")), let arg = argv[i] else { return nil }
        return String(cString: UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self))
    }

    private static let onReply: lo_method_handler = { _, types, argv, _, _, data in
        let me = client(data)
        if string(argv, types, 0) == "/nsm/server/announce" {
            me.events.append(.announced(manager: string(argv, types, 2) ?? "a session manager"))
        }
        return 0
    }

    private static let onError: lo_method_handler = { _, types, argv, argc, _, data in
        let me = client(data)
        guard string(argv, types, 0) == "/nsm/server/announce", argc >= 3, let types, types[1] == CChar(UInt8(ascii: "i")),
              let code = argv?[1] else { return 0 }
        me.events.append(.refused(code: code.pointee.i, message: string(argv, types, 2) ?? ""))
        return 0
    }

    private static let onOpen: lo_method_handler = { _, types, argv, _, _, data in
        guard let path = string(argv, types, 0), let name = string(argv, types, 1), let id = string(argv, types, 2) else { return 0 }
        client(data).events.append(.open(path: path, displayName: name, clientID: id))
        return 0
    }

    private static let onSave: lo_method_handler = { _, _, _, _, _, data in
        client(data).events.append(.save)
        return 0
    }

    private static let onLoaded: lo_method_handler = { _, _, _, _, _, data in
        client(data).events.append(.sessionIsLoaded)
        return 0
    }
}
