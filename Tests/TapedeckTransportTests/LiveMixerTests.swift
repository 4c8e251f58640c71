import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport

/// Opens the test config's devices and counts how often it is asked to.
private final class CountingProvider: DeviceProvider {
    let name: String
    private(set) var opens = 0
    init(name: String) { self.name = name }
    func catalog(current: String) -> [String] { [current] }
    func open(name: String, sampleRate: Int) throws -> AudioDevice {
        opens += 1
        return try TransportFixture.device(self.name)
    }
}

/// What a listener hears when the mix changes under a playing transport: on a device paced
/// in real time, fifty fader, pan, mute and solo moves and a chain edit never reopen the
/// device, leave no gap, and between them the output is the offline mix of those settings
/// (the master fader's moves included).
final class LiveMixerTests: XCTestCase {
    func testFiftyMixerChangesAndAChainEditWhilePlayingKeepTheDeviceAndMatchTheOfflineMix() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let rate = 48000, seconds = 10
        let signals = (0..<3).map { TransportFixture.noise(seconds * rate, seed: UInt32(11 + $0), amplitude: 0.3) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: signals)
        session.tracks[0].pan = -0.5
        session.tracks[2].pan = 0.7
        try folder.save(session)
        let out = dir + "/out.raw"
        let provider = CountingProvider(name: "jacktap:OUT=\(out)")
        let transport = try Transport(session: session, folder: folder, device: try provider.open(name: "jacktap", sampleRate: rate),
                                      provider: provider, startsDevice: false)
        transport.play(from: 0)
        try transport.startDevice()

        // Each change: the session after it, and the playhead just before it was made.
        var changes: [(frame: Int64, session: Session, settle: Int64)] = [(0, session, 0)]
        var current = session
        for i in 0..<50 {
            usleep(140_000)
            let t = i % 3
            switch i % 5 {
            case 0: current.tracks[t].gainDecibels = Double(-(i % 13))
            case 1: current.tracks[t].pan = Double(i % 9) / 4 - 1
            case 2: current.tracks[t].mute.toggle()
            case 3: current.tracks[t].solo.toggle()
            default:
                current.tracks[t].gainDecibels += 2
                // Every tenth change moves the master fader too.
                if i % 10 == 9 { current.masterGainDecibels = -Double(i % 7) - 0.5 }
            }
            var settle: Int64 = 2048
            if i == 25 {
                // A chain edit: new nodes, a new strip taking over a little ahead.
                current.tracks[1].playbackChain = "gain:-6,hpf:200"
                settle = 8192 + 4096
            }
            let before = transport.snapshot().positionFrame
            XCTAssertNil(transport.follow(session: current))
            changes.append((before, current, settle))
        }
        let end = TransportFixture.waitFor(transport, timeout: 30) { $0.state == .stopped }
        transport.close()
        XCTAssertEqual(end.positionFrame, Int64(seconds * rate), "played to the end")
        XCTAssertEqual(end.xrunCount, 0, "a paced run with no xrun (else the output's timing shifts)")
        XCTAssertEqual(provider.opens, 1, "the device was opened once, for the whole run")

        // OUT: one buffer of prefill, then every period that was played.
        let prefill = 768
        let played = try TransportFixture.stereo(out)
        XCTAssertGreaterThanOrEqual(played.left.count - prefill, seconds * rate, "the full length, no gap")
        // With an xrun the output's frames are not where the comparison looks for them (and a
        // short file would be read past its end): the failures above say so.
        guard end.xrunCount == 0, played.left.count - prefill >= seconds * rate else { return }
        var compared = 0
        for (k, change) in changes.enumerated() {
            let from = change.frame + change.settle
            let to = k + 1 < changes.count ? changes[k + 1].frame - 256 : Int64(seconds * rate)
            guard to - from > 1000 else { continue }
            // The offline mix of these settings, from well before the span so chains have settled.
            let lead: Int64 = min(from, 8192)
            let path = dir + "/expected-\(k).wav"
            let request = Mixdown.Request(session: change.session, folder: folder,
                                          range: FrameRange(startFrame: from - lead, endFrame: to), outputPath: path,
                                          container: .wav, encoding: .float32)
            _ = try Mixdown(request).run { _ in }
            let reader = try AudioFileReader(path: path)
            let count = Int(reader.frameCount)
            let l = UnsafeMutablePointer<Float>.allocate(capacity: count), r = UnsafeMutablePointer<Float>.allocate(capacity: count)
            defer { l.deallocate(); r.deallocate() }
            var got = 0
            while got < count {
                let n = try reader.read(into: [l + got, r + got], frameCount: count - got)
                if n == 0 { break }
                got += n
            }
            XCTAssertEqual(got, count)
            var worst: Float = 0
            for i in Int(lead)..<count {
                let at = prefill + Int(from - lead) + i
                worst = max(worst, abs(played.left[at] - l[i]), abs(played.right[at] - r[i]))
            }
            XCTAssertLessThan(worst, 1e-4, "change \(k): frames \(from)..<\(to) are the offline mix of its settings")
            compared += count - Int(lead)
        }
        XCTAssertGreaterThan(compared, seconds * rate / 2, "most of the run was compared")
    }
}
