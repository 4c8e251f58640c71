import Foundation
import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// A ``ControlServer`` whose socket I/O — accepting, reading, bounded buffers, timeouts,
/// writing replies — runs on a thread of its own, so no client can delay the loop that owns
/// the transport (a recorder's): that loop only takes requests already read and parsed
/// (``answer(limit:_:)``, which never waits on a client) and hands each reply back to be sent.
///
/// The transport is not thread-safe, so commands are never carried out here: the owner's
/// thread runs them, exactly as its own controls.
public final class ControlServerThread: @unchecked Sendable {
    /// The socket's path.
    public let path: String
    private let server: ControlServer
    /// Owner → I/O thread: replies are waiting to be sent, or it is time to close (a pipe:
    /// read end, write end; both non-blocking, so a full pipe only means it is awake already).
    private let wakeIO: (read: Int32, write: Int32)
    /// I/O thread → owner: requests are waiting (``notifyDescriptor``).
    private let wakeOwner: (read: Int32, write: Int32)
    private let lock = NSLock()
    // Under `lock`: the only state both threads touch, and only to move arrays along.
    private var requests: [ControlServer.Request] = []
    private var replies: [(connection: Int, reply: RemoteReply)] = []
    private var stopping = false
    private var thread: Thread?
    private let finished = DispatchSemaphore(value: 0)
    private var closed = false

    /// Makes the socket (see ``ControlServer/init(session:)``) and starts serving it; ``close()`` stops
    /// it (the thread holds this object until then). Owner's thread.
    public init(session: String? = nil) throws(RemoteError) {
        server = try ControlServer(session: session)
        path = server.path
        let io = Self.makePipe(), owner = Self.makePipe()
        guard let io, let owner else {
            let why = String(cString: strerror(errno))
            for p in [io, owner].compactMap({ $0 }) { Glibc.close(p.read); Glibc.close(p.write) }
            server.close()
            throw RemoteError("cannot start the control socket's thread: pipe: \(why)")
        }
        wakeIO = io
        wakeOwner = owner
        let thread = Thread { [self] in
            ThreadName.setCurrent("tapedeck-ctl")
            run()
        }
        self.thread = thread
        thread.start()
    }

    deinit { close() }

    /// Readable when requests wait: an owner with nothing else to wait on may poll it (or
    /// call ``wait(milliseconds:limit:_:)``). Owner's thread.
    public var notifyDescriptor: Int32 { wakeOwner.read }

    /// Answers at most `limit` of the requests waiting, oldest first, with `handle` (on the
    /// caller's thread), and hands the replies to the I/O thread to send. Never waits on a
    /// client: a flood only ever costs the owner `limit` calls of `handle` per call of this.
    /// Returns how many it answered. Owner's thread.
    @discardableResult
    public func answer(limit: Int = 32, _ handle: (RemoteCommand, ControlServer.Peer) -> RemoteReply) -> Int {
        Self.drain(wakeOwner.read)
        lock.lock()
        let batch = Array(requests.prefix(limit))
        requests.removeFirst(batch.count)
        let more = !requests.isEmpty
        lock.unlock()
        // Still some: the descriptor stays readable for the next pass.
        if more { signal(wakeOwner) }
        guard !batch.isEmpty else { return 0 }
        var answered: [(connection: Int, reply: RemoteReply)] = []
        answered.reserveCapacity(batch.count)
        for request in batch {
            switch request.command {
            case .success(let command): answered.append((request.connection, handle(command, request.peer)))
            case .failure(let error): answered.append((request.connection, .error(error.description)))
            }
        }
        lock.lock()
        replies += answered
        lock.unlock()
        signal(wakeIO)
        return batch.count
    }

    /// Spends `milliseconds` (a loop's pause between passes) answering what arrives meanwhile,
    /// at most `limit` requests in all, then returns: the pause is never longer for a flood,
    /// and a good client is answered as soon as it asks. Owner's thread.
    public func wait(milliseconds: Int, limit: Int = 64, _ handle: (RemoteCommand, ControlServer.Peer) -> RemoteReply) {
        let deadline = Self.milliseconds() + Int64(milliseconds)
        var budget = limit
        while true {
            let left = deadline - Self.milliseconds()
            guard left > 0 else { return }
            if budget <= 0 {
                // Enough done for clients this pass; the rest waits for the next.
                usleep(useconds_t(left * 1000))
                return
            }
            var fds = pollfd(fd: wakeOwner.read, events: Int16(POLLIN), revents: 0)
            if poll(&fds, 1, Int32(left)) > 0 { budget -= answer(limit: budget, handle) }
        }
    }

    /// Stops the thread, then closes the socket (removing it). Safe to call twice. Owner's thread.
    public func close() {
        guard !closed else { return }
        closed = true
        lock.lock()
        stopping = true
        lock.unlock()
        signal(wakeIO)
        if thread != nil { finished.wait() }
        thread = nil
        for fd in [wakeIO.read, wakeIO.write, wakeOwner.read, wakeOwner.write] { Glibc.close(fd) }
    }

    /// The I/O thread: waits on the socket and the owner's replies, never on the owner.
    private func run() {
        defer {
            server.close()
            finished.signal()
        }
        while true {
            var fds = server.pollDescriptors + [pollfd(fd: wakeIO.read, events: Int16(POLLIN), revents: 0)]
            // Timeouts (idle clients, replies never taken) are checked at least this often.
            _ = poll(&fds, nfds_t(fds.count), 250)
            Self.drain(wakeIO.read)
            lock.lock()
            let stop = stopping
            let ready = replies
            replies = []
            lock.unlock()
            if stop { return }
            for r in ready { server.deliver(r.reply, to: r.connection) }
            var arrived: [ControlServer.Request] = []
            server.serviceDeferred { arrived.append($0) }
            if !arrived.isEmpty {
                lock.lock()
                requests += arrived
                lock.unlock()
                signal(wakeOwner)
            }
        }
    }

    private func signal(_ pipe: (read: Int32, write: Int32)) {
        var one: UInt8 = 1
        _ = write(pipe.write, &one, 1)
    }

    private static func drain(_ fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        while bytes.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
    }

    private static func makePipe() -> (read: Int32, write: Int32)? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        return (fds[0], fds[1])
    }

    private static func milliseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }
}
