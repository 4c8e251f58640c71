import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A running Tapedeck's control socket (`ControlFolder/PID.sock`): a line in, a line out
/// (see ``RemoteCommand``). It never blocks and owns no thread: the front-end waits on
/// ``pollDescriptors`` beside its own input (the screen's keyboard) and calls ``service(_:)``
/// from its own loop, so commands are carried out on the thread that owns the transport —
/// exactly as its keys are. A loop that must not spend its time on clients (a recorder) uses
/// ``ControlServerThread`` instead, which runs this server's I/O on a thread of its own.
public final class ControlServer {
    /// Who is on the other end of a connection (from the kernel: `SO_PEERCRED`).
    public struct Peer: Sendable, CustomStringConvertible {
        /// Its process.
        public var pid: pid_t
        /// Its user.
        public var uid: uid_t
        /// Its program's name (`/proc/PID/comm`), e.g. `tapedeck`.
        public var program: String

        /// `tapedeck ctl (pid 4242)`, for the message line.
        public var description: String {
            let name = program == "tapedeck" ? "tapedeck ctl" : program
            return "\(name) (pid \(pid))"
        }
    }

    /// A line read from a client, parsed, and waiting for its answer from the thread that owns
    /// the transport (see ``serviceDeferred(_:)``).
    public struct Request: Sendable {
        /// The command, or why the line is not one (answered as an error, in its turn).
        public let command: Result<RemoteCommand, RemoteError>
        /// Who asked.
        public let peer: Peer
        /// The connection the answer goes to (see ``deliver(_:to:)``).
        public let connection: Int
    }

    private final class Connection {
        let id: Int
        let fd: Int32
        let peer: Peer
        var input: [UInt8] = []
        var output: [UInt8] = []
        var lastActivity: Double
        /// When the client last took bytes of a reply (or when replies started waiting).
        var lastDrained: Double
        var closing = false
        /// The size of the last reply queued: one reply may be longer than the pending limit
        /// (a command line's long answer), a client that never reads may not queue more.
        var lastReplyBytes = 0
        var pendingLimit: Int { max(ControlServer.maximumPendingReplyBytes, lastReplyBytes) }
        /// Queues `reply` for the client.
        func queue(_ reply: RemoteReply) {
            let bytes = Array((reply.line + "\n").utf8)
            lastReplyBytes = bytes.count
            output += bytes
        }
        /// Requests handed out by ``serviceDeferred(_:)`` and not answered yet.
        var awaiting = 0
        /// Let go whatever it still waits for (it left, or never reads).
        var dead = false
        init(id: Int, fd: Int32, peer: Peer, now: Double) {
            self.id = id
            self.fd = fd
            self.peer = peer
            lastActivity = now
            lastDrained = now
        }
    }

    /// The socket's path.
    public let path: String
    /// The note beside it naming the session this Tapedeck has open (`PID.session`), if any:
    /// how other Tapedecks know which sessions are open (``ControlFolder/openSessions()``).
    private let sessionNote: String?
    private let listener: Int32
    private var connections: [Connection] = []
    private var closed = false
    private var nextConnection = 0
    /// At most this many clients at once; a line at most this long.
    static let maximumConnections = 32
    /// (A command line handed over with many files to import runs to a few kilobytes; one
    /// longer than a line is handed over in a file: see ``ControlClient/sendCommandLine``.)
    public static let maximumLineBytes = 64 * 1024
    /// The longest command line handed over in a file (`cmd-file NAME`): past anything Linux
    /// lets a command line hold (its arguments total about 2 MiB), each byte escaped sixfold.
    public static let maximumCommandFileBytes = 16 << 20
    /// A client silent this long is let go.
    static let idleSeconds = 10.0
    /// Replies waiting for a client that does not read are bounded: past this many bytes, or
    /// this long without taking any, it is let go (a flood of requests never grows memory).
    static let maximumPendingReplyBytes = 64 * 1024
    static let drainSeconds = 2.0
    /// Lines answered per client per ``service(_:)`` call: a client that sends thousands at
    /// once waits its turn instead of holding up the loop (and the other clients).
    static let maximumLinesPerService = 8
    /// Requests of one client handed out by ``serviceDeferred(_:)`` and not yet answered: a
    /// client that pipelines thousands has this many in the owner's queue, never more.
    static let maximumAwaitingPerClient = 4
    /// Connections the kernel queues before ``service(_:)`` accepts them.
    static let listenBacklog: Int32 = 128

    /// Makes the folder and the socket (mode 0600) and listens; notes `session` (the folder
    /// this Tapedeck has open) beside the socket. Control thread.
    public init(session: String? = nil) throws(RemoteError) {
        let folder = try ControlFolder.prepare()
        // Sockets of processes that are gone would otherwise pile up, one per crash or
        // SIGKILL, and wait for their pid to be reused by something that does not listen.
        _ = ControlFolder.running()
        path = folder + "/\(getpid()).sock"
        unlink(path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw RemoteError("cannot make the control socket: \(String(cString: strerror(errno)))") }
        // The folder is 0700 already; the socket itself is 0600 as well. bind makes it with
        // 0777 less the umask, so it is bound under a name no client looks for (no longer than
        // the real one), made 0600, and only then renamed into place: nothing ever finds it
        // with the mode bind gave it (CI once read 0755 between the bind and the chmod).
        let binding = folder + "/\(getpid()).tmp"
        unlink(binding)
        guard let bound = UnixSocketAddress.with(binding, { bind(fd, $0, $1) }) else {
            Glibc.close(fd)
            throw RemoteError("the control socket's path is too long: \(path)")
        }
        guard bound == 0, chmod(binding, 0o600) == 0, rename(binding, path) == 0, listen(fd, Self.listenBacklog) == 0 else {
            let why = String(cString: strerror(errno))
            Glibc.close(fd)
            unlink(binding)
            unlink(path)
            throw RemoteError("cannot listen on \(path): \(why)")
        }
        listener = fd
        sessionNote = session.map { _ in folder + "/\(getpid()).session" }
        if let note = sessionNote, let session {
            // Written whole under a temporary name, then renamed: a reader sees all of it or none.
            let absolute = session.hasPrefix("/") ? session : FileManager.default.currentDirectoryPath + "/" + session
            let temporary = note + ".tmp"
            unlink(temporary)
            let noteFD = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if noteFD >= 0 {
                let bytes = Array((absolute + "\n").utf8)
                let written = bytes.withUnsafeBytes { Glibc.write(noteFD, $0.baseAddress, $0.count) }
                Glibc.close(noteFD)
                if written != bytes.count || rename(temporary, note) != 0 { unlink(temporary) }
            }
        }
    }

    deinit { close() }

    /// Stops listening and removes the socket. Safe to call twice.
    public func close() {
        guard !closed else { return }
        closed = true
        for c in connections { Glibc.close(c.fd) }
        connections = []
        Glibc.close(listener)
        unlink(path)
        if let sessionNote { unlink(sessionNote) }
    }

    /// What to wait on: new connections, requests, replies that did not fit at once.
    public var pollDescriptors: [pollfd] {
        guard !closed else { return [] }
        var fds = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
        for c in connections {
            // A client whose lines are still queued is not read further until they are answered.
            let wantsInput = c.input.count <= Self.maximumLineBytes
            fds.append(pollfd(fd: c.fd, events: (wantsInput ? Int16(POLLIN) : 0) | (c.output.isEmpty ? 0 : Int16(POLLOUT)), revents: 0))
        }
        return fds
    }

    /// Waits up to `milliseconds` for something to do (for a loop that has nothing else to
    /// wait on), then does it.
    public func wait(milliseconds: Int, _ handle: (RemoteCommand, Peer) -> RemoteReply) {
        var fds = pollDescriptors
        _ = poll(&fds, nfds_t(fds.count), Int32(milliseconds))
        service(handle)
    }

    /// Accepts whoever waits, answers every complete line with `handle`'s reply, sends what
    /// is pending and lets go of clients that left or idled. Never blocks.
    public func service(_ handle: (RemoteCommand, Peer) -> RemoteReply) {
        pump(ready: { _ in true }) { c, command in
            let reply: RemoteReply
            switch command {
            case .success(let command): reply = handle(command, c.peer)
            case .failure(let error): reply = .error(error.description)
            }
            c.queue(reply)
        }
    }

    /// As ``service(_:)``, but nothing is answered here: each complete line becomes a
    /// ``Request`` handed to `take` (at most ``maximumAwaitingPerClient`` per client waiting at
    /// once), and its answer comes later through ``deliver(_:to:)``, in the order asked. For a
    /// server whose I/O runs on a thread that does not own the transport. Never blocks.
    public func serviceDeferred(_ take: (Request) -> Void) {
        pump(ready: { $0.awaiting < Self.maximumAwaitingPerClient }) { c, command in
            c.awaiting += 1
            take(Request(command: command, peer: c.peer, connection: c.id))
        }
    }

    /// The answer to a request ``serviceDeferred(_:)`` handed out, queued to be sent (by the
    /// next ``serviceDeferred(_:)``). A client that left meanwhile is not answered.
    public func deliver(_ reply: RemoteReply, to connection: Int) {
        guard let c = connections.first(where: { $0.id == connection }) else { return }
        c.awaiting = max(0, c.awaiting - 1)
        guard !c.dead else { return }
        c.queue(reply)
    }

    /// Sends what replies are pending (as far as each client takes them) without reading
    /// anything: for an answer delivered between two passes. Never blocks.
    public func sendPending() {
        guard !closed else { return }
        let now = Self.seconds()
        for c in connections { flush(c, now: now) }
    }

    /// The one pass both ways of serving make: accept, read, hand each complete line to
    /// `take` while the client is `ready` for more, send, let go.
    private func pump(ready: (Connection) -> Bool, take: (Connection, Result<RemoteCommand, RemoteError>) -> Void) {
        guard !closed else { return }
        let now = Self.seconds()
        acceptWaiting(now: now)
        for c in connections where !c.closing {
            read(c, now: now)
            var answered = 0
            while answered < Self.maximumLinesPerService, c.output.count <= c.pendingLimit, ready(c),
                  let end = c.input.firstIndex(of: UInt8(ascii: "\n")) {
                answered += 1
                var bytes = Array(c.input[..<end])
                c.input.removeSubrange(...end)
                if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                if let line = String(validating: bytes, as: UTF8.self) {
                    take(c, line.hasPrefix("cmd-file ") ? commandFromFile(String(line.dropFirst(9))) : RemoteCommand.parse(line))
                } else {
                    take(c, .failure(RemoteError("the line is not UTF-8 text")))
                }
            }
            if c.output.count > c.pendingLimit {
                // It asks and never reads: nothing more is said to it.
                c.output = []
                c.input = []
                c.closing = true
                c.dead = true
            } else if !c.input.contains(UInt8(ascii: "\n")) && c.input.count > Self.maximumLineBytes {
                c.output += Array("error: a line longer than \(Self.maximumLineBytes) bytes\n".utf8)
                c.input = []
                c.closing = true
                c.dead = true
            }
            // A client waiting for an answer (an import running on the owner's worker) is
            // not idle: it is answered when the work is done.
            if now - c.lastActivity > Self.idleSeconds && c.awaiting == 0 { c.closing = true }
        }
        for c in connections {
            flush(c, now: now)
            if !c.output.isEmpty && now - c.lastDrained > Self.drainSeconds {
                // Replies wait this long untaken: the client is not reading.
                c.output = []
                c.closing = true
                c.dead = true
            }
            // A client that hung up after asking is still answered, unless the answer never comes.
            if c.closing && now - c.lastActivity > Self.idleSeconds { c.dead = true }
        }
        connections.removeAll { c in
            guard c.closing && c.output.isEmpty && (c.awaiting == 0 || c.dead) else { return false }
            Glibc.close(c.fd)
            return true
        }
    }

    /// `cmd-file NAME`: a typed command too long for a line, left by the asker (a process of
    /// this user's, as every client is) in this socket's own folder as `PID.cmd-…`, a plain
    /// file of this user's, never a link. Read once and removed.
    private func commandFromFile(_ name: String) -> Result<RemoteCommand, RemoteError> {
        guard name.hasPrefix("\(getpid()).cmd-"), !name.contains("/"), name.count < 128 else {
            return .failure(RemoteError("cmd-file names a file of this Tapedeck's control folder (PID.cmd-…)"))
        }
        let file = (path as NSString).deletingLastPathComponent + "/" + name
        let fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .failure(RemoteError("cmd-file \(name): \(String(cString: strerror(errno)))")) }
        defer { Glibc.close(fd); unlink(file) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_uid == getuid(),
              st.st_size <= Self.maximumCommandFileBytes else {
            return .failure(RemoteError("cmd-file \(name) is not a command line of yours (a plain file of at most \(Self.maximumCommandFileBytes) bytes)"))
        }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, $0.count - done) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        guard done == bytes.count, let text = String(validating: bytes, as: UTF8.self) else {
            return .failure(RemoteError("cmd-file \(name) could not be read whole as UTF-8 text"))
        }
        return TypedCommand.parse(text).map { .typed($0) }
    }

    private func acceptWaiting(now: Double) {
        // Bounded: clients that reconnect as fast as they are refused cannot keep one pass
        // accepting for ever (the rest wait in the backlog for the next pass).
        for _ in 0..<Self.maximumConnections * 2 {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            var cred = PeerCredentials()
            var length = socklen_t(MemoryLayout<PeerCredentials>.size)
            guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &length) == 0 else {
                Glibc.close(fd)
                continue
            }
            let peer = Peer(pid: cred.pid, uid: cred.uid, program: Self.program(of: cred.pid))
            // The socket's mode keeps other users out; the kernel's word on who called is
            // checked too (root, or a descriptor passed along, gets no further).
            guard cred.uid == getuid() else {
                Self.say(fd, "error: refused: this Tapedeck answers only its own user (uid \(getuid()))\n")
                Glibc.close(fd)
                continue
            }
            guard connections.count < Self.maximumConnections else {
                Self.say(fd, "error: busy: \(Self.maximumConnections) clients are connected already\n")
                Glibc.close(fd)
                continue
            }
            nextConnection += 1
            connections.append(Connection(id: nextConnection, fd: fd, peer: peer, now: now))
        }
    }

    private func read(_ c: Connection, now: Double) {
        var buffer = [UInt8](repeating: 0, count: 1024)
        while c.input.count <= Self.maximumLineBytes {
            let n = buffer.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 {
                c.input += buffer[0..<n]
                c.lastActivity = now
                continue
            }
            if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { c.closing = true }
            return
        }
    }

    private func flush(_ c: Connection, now: Double) {
        if c.output.isEmpty { c.lastDrained = now }
        while !c.output.isEmpty {
            let n = c.output.withUnsafeBytes { send(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
            if n > 0 {
                c.output.removeFirst(n)
                c.lastDrained = now
                continue
            }
            if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
            // The client went away: nothing more to say to it.
            c.output = []
            c.closing = true
            c.dead = true
        }
    }

    private static func say(_ fd: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }
    }

    /// Linux's `struct ucred` (which Glibc's Swift module leaves out without _GNU_SOURCE).
    private struct PeerCredentials {
        var pid: pid_t = 0
        var uid: uid_t = 0
        var gid: gid_t = 0
    }

    private static func program(of pid: pid_t) -> String {
        let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? ""
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? "a client" : trimmed
    }

    private static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
