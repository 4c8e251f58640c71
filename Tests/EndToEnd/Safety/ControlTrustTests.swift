import Foundation
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckRemote

/// The control client trusts nothing it did not make (issue 40, item 3). With
/// `XDG_RUNTIME_DIR` unset (cron, `su`, containers) the control folder is
/// `/tmp/tapedeck-UID`, which any local user can make first. Each test runs its commands in a
/// mount namespace of their own whose `/tmp` is the test's folder (`unshare`), and acts as
/// another user with `setpriv`: root only, skipped elsewhere with the reason.
final class ControlTrustTests: XCTestCase {
    /// A user that is not the test's.
    private let stranger: uid_t = 12345

    /// A listening socket planted at `path` (owned by `owner`), that records who connects
    /// and what they send.
    private final class Planted {
        let fd: Int32
        init(path: String, owner: uid_t) throws {
            fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0, UnixSocketAddress.with(path, { bind(fd, $0, $1) }) == 0, listen(fd, 16) == 0 else {
                throw XCTSkip("cannot plant a socket at \(path): \(String(cString: strerror(errno)))")
            }
            chown(path, owner, owner)
            chmod(path, 0o777)
        }
        deinit { close(fd) }

        /// The bytes each connection made so far sent (empty: nobody connected).
        func heard() -> [Int] {
            var out: [Int] = []
            while true {
                let c = accept(fd, nil, nil)
                guard c >= 0 else { return out }
                var total = 0
                var buffer = [UInt8](repeating: 0, count: 4096)
                var p = pollfd(fd: c, events: Int16(POLLIN), revents: 0)
                while poll(&p, 1, 300) > 0 {
                    let n = buffer.withUnsafeMutableBytes { read(c, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    total += n
                }
                close(c)
                out.append(total)
            }
        }
    }

    private func prepare() throws -> (dir: String, tmp: String) {
        guard getuid() == 0 else { throw XCTSkip("acting as another user (setpriv) and a private /tmp (unshare) need root") }
        for tool in ["/usr/bin/unshare", "/usr/bin/setpriv"] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw XCTSkip("\(tool) is not installed")
        }
        // Not under /tmp: inside the namespace /tmp is the folder made here.
        let dir = "/var/tmp/tapedeck-trust-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        chmod(dir, 0o755)
        let tmp = dir + "/tmp"
        mkdir(tmp, 0o777)
        chmod(tmp, 0o1777)
        // The binary and the ALSA test config are used from here: the checkout may lie under
        // /tmp (hidden inside the namespace) or in a folder another user cannot enter.
        try FileManager.default.copyItem(atPath: Tapedeck.binary, toPath: dir + "/tapedeck")
        chmod(dir + "/tapedeck", 0o755)
        try FileManager.default.copyItem(atPath: Tapedeck.alsaTestConfig, toPath: dir + "/alsa-test.conf")
        chmod(dir + "/alsa-test.conf", 0o644)
        return (dir, tmp)
    }

    /// Runs `script` with `tmp` as /tmp, XDG_RUNTIME_DIR unset, `$TAPEDECK` the binary.
    private func inPrivateTmp(_ tmp: String, _ script: String) throws -> Tapedeck.Result {
        try Tapedeck.run(["--mount", "--propagation", "private", "/bin/sh", "-c",
                          "mount --bind '\(tmp)' /tmp || exit 99\nunset XDG_RUNTIME_DIR\nTAPEDECK='\((tmp as NSString).deletingLastPathComponent)/tapedeck'\n"
                          + "export TAPEDECK_ALSA_CONFIG='\((tmp as NSString).deletingLastPathComponent)/alsa-test.conf'\n" + script],
                         executable: "/usr/bin/unshare", timeout: 60)
    }

    /// The issue's case: another user made `/tmp/tapedeck-0` first (mode 0777) and listens
    /// there as a Tapedeck would. `ctl` refuses in one line naming the folder, and so does an
    /// edit handed to the "owner" of a session; nothing reaches her socket.
    func testAFolderAnotherUserPlantedIsRefusedAndNothingReachesItsSocket() throws {
        let (dir, tmp) = try prepare()
        let planted = tmp + "/tapedeck-\(getuid())"
        mkdir(planted, 0o777)
        chmod(planted, 0o777)
        chown(planted, stranger, stranger)
        // She listens as the test's own pid (a process that runs), and as the lock holder below.
        let listener = try Planted(path: planted + "/\(getpid()).sock", owner: stranger)

        for args in ["ctl status", "ctl stop", "ctl --pid \(getpid()) status"] {
            let r = try inPrivateTmp(tmp, "exec \"$TAPEDECK\" \(args)")
            XCTAssertEqual(r.status, 1, "\(args): \(r.stdout)\(r.stderr)")
            XCTAssertEqual(r.stdout, "", args)
            XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, "\(args): one line: \(r.stderr)")
            XCTAssertTrue(r.stderr.contains("/tmp/tapedeck-\(getuid()) is not to be trusted (it belongs to another user (uid \(stranger)))"),
                          "\(args): \(r.stderr)")
        }

        // A session whose lock this process holds, as if it were a screen serving that socket.
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        try folder.create(Session())
        let lock = try SessionLock.acquire(folder)
        let edit = try inPrivateTmp(tmp, "exec \"$TAPEDECK\" marker '\(folder.path)' add 1:00 Stolen")
        withExtendedLifetime(lock) {}
        XCTAssertEqual(edit.status, 69, edit.stderr)
        XCTAssertEqual(edit.stderr.split(separator: "\n").count, 1, edit.stderr)
        XCTAssertTrue(edit.stderr.contains("it cannot be asked to make the edit: /tmp/tapedeck-\(getuid()) is not to be trusted"), edit.stderr)
        XCTAssertEqual(listener.heard(), [], "nobody connected to the planted socket")
    }

    /// A folder that passes every check but whose socket is answered by a process of another
    /// user (here: root, for a client running as another user): refused before a byte is sent.
    func testAProcessOfAnotherUserListeningInYourFolderHearsNothing() throws {
        let (_, tmp) = try prepare()
        let own = tmp + "/tapedeck-\(stranger)"
        mkdir(own, 0o700)
        chown(own, stranger, stranger)
        let listener = try Planted(path: own + "/\(getpid()).sock", owner: stranger)
        let r = try inPrivateTmp(tmp, "exec setpriv --reuid=\(stranger) --regid=\(stranger) --clear-groups env HOME=/tmp \"$TAPEDECK\" ctl --pid \(getpid()) status")
        XCTAssertEqual(r.status, 1, r.stdout + r.stderr)
        XCTAssertEqual(r.stderr.split(separator: "\n").count, 1, r.stderr)
        XCTAssertTrue(r.stderr.contains("/tmp/tapedeck-\(stranger): the process listening at /tmp/tapedeck-\(stranger)/\(getpid()).sock runs as uid 0, not as you (uid \(stranger)); nothing was sent"), r.stderr)
        XCTAssertEqual(listener.heard(), [0], "it connected, saw who listens and hung up without a word")
    }

    /// With `/tmp/tapedeck-0` taken, a Tapedeck listens in a folder of its own whose name
    /// cannot be predicted, and `ctl` finds it there (saying once that the other is refused).
    func testASquattedFolderMovesTheServerSomewhereUnpredictableAndCtlFindsIt() throws {
        let (dir, tmp) = try prepare()
        let planted = tmp + "/tapedeck-\(getuid())"
        mkdir(planted, 0o777)
        chmod(planted, 0o777)
        chown(planted, stranger, stranger)
        let listener = try Planted(path: planted + "/1.sock", owner: stranger)
        let folder = SessionFolder(path: dir + "/s.tapedeck")
        var session = Session()
        session.tracks = [Track(name: "Mic", inputChannels: [1], armed: true)]
        try folder.create(session)
        let script = """
        "$TAPEDECK" record '\(folder.path)' --retro 5 --device filetap48:IN=/dev/zero,OUT=/dev/null >'\(dir)/rec.out' 2>'\(dir)/rec.err' &
        pid=$!
        for i in $(seq 100); do ls /tmp/tapedeck-\(getuid())-*/$pid.sock >/dev/null 2>&1 && break; sleep 0.1; done
        ls -d /tmp/tapedeck-\(getuid())-* >'\(dir)/folders'
        "$TAPEDECK" ctl status >'\(dir)/status.out' 2>'\(dir)/status.err'; echo $? >'\(dir)/status.rc'
        "$TAPEDECK" ctl stop >/dev/null 2>&1
        wait $pid
        echo $pid >'\(dir)/pid'
        """
        let r = try inPrivateTmp(tmp, script)
        XCTAssertEqual(r.status, 0, r.stderr)
        func read(_ name: String) -> String { ((try? String(contentsOfFile: dir + "/" + name, encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        let folders = read("folders").split(separator: "\n").map(String.init)
        XCTAssertEqual(folders.count, 1, "one folder of its own: \(folders); the recorder said: \(read("rec.err"))")
        let name = (folders.first.map { ($0 as NSString).lastPathComponent }) ?? ""
        XCTAssertTrue(name.hasPrefix("tapedeck-\(getuid())-") && name.count == "tapedeck-\(getuid())-".count + 6, name)
        var st = stat()
        XCTAssertEqual(lstat(tmp + "/" + name, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o700)
        XCTAssertEqual(st.st_uid, getuid())
        XCTAssertEqual(read("status.rc"), "0", read("status.err"))
        let status = (try? JSONSerialization.jsonObject(with: Data(read("status.out").utf8))) as? [String: Any] ?? [:]
        XCTAssertEqual(status["pid"] as? Int, Int(read("pid")), read("status.out"))
        XCTAssertTrue(read("status.err").contains("warning: ctl: /tmp/tapedeck-\(getuid()) is not to be trusted"), read("status.err"))
        XCTAssertEqual(listener.heard(), [], "nothing reached the squatter")
    }
}
