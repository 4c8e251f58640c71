import Foundation
import Synchronization
import XCTest
import TapedeckCore
import TapedeckIO
@testable import TapedeckEngine

/// A region that plays a file wider than stereo (a session made before imports split such
/// files, or a file placed by hand) is heard with its stated downmix — every channel at its
/// ITU-R BS.775 gain in left and right, the LFE dropped — live on a device and in export
/// alike, since both read the file through the same ``RegionStream``.
final class MultichannelPlaybackTests: XCTestCase {
    private var folder: SessionFolder!
    static let rate = 48000
    /// A tone per channel of the 5.1 file (Hz: whole cycles in any half second), L R C LFE Ls Rs.
    static let tones: [Double] = [300, 500, 700, 100, 1100, 1300]
    /// Each channel's peak level.
    static let levels: [Double] = [0.10, 0.12, 0.14, 0.16, 0.18, 0.20]

    override func setUpWithError() throws {
        let path = try Fixture.temporaryFolder() + "/s.tapedeck"
        folder = SessionFolder(path: path)
        try folder.create(Session())
        addTeardownBlock { [path] in try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
    }

    /// A 6-channel, 24-bit file of `seconds` with the tones, stating the 5.1 layout unless
    /// `positions` is nil, and a session playing it on one track (centred, 0 dB).
    private func session(positions: [ChannelPosition]? = [.left, .right, .center, .lfe, .rearLeft, .rearRight],
                         seconds: Int = 2) throws -> Session {
        let frames = seconds * MultichannelPlaybackTests.rate
        let channels = zip(MultichannelPlaybackTests.tones, MultichannelPlaybackTests.levels).map { hz, level in
            (0..<frames).map { Float(level * sin(2 * .pi * hz * Double($0) / Double(MultichannelPlaybackTests.rate))) }
        }
        let writer = try AudioFileWriter(path: folder.audioFolder + "/surround.wav",
                                         format: AudioFileFormat(container: .wav, encoding: .int24, sampleRate: MultichannelPlaybackTests.rate, channelCount: 6),
                                         expectedFrameCount: Int64(frames), channelLayout: positions)
        try writer.write(arrays: channels)
        try writer.close()
        var s = Session()
        s.tracks = [Track(name: "Surround", regions: [Region(file: "audio/surround.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))])]
        return s
    }

    /// The peak level of the `hertz` tone in `x[range]` (Goertzel over whole cycles).
    static func level(of hertz: Double, in x: [Float], _ range: Range<Int>) -> Double {
        let n = range.count
        let w = 2 * Double.pi * hertz / Double(rate)
        let c = 2 * cos(w)
        var s1 = 0.0, s2 = 0.0
        for i in range {
            let s = Double(x[i]) + c * s1 - s2
            s2 = s1
            s1 = s
        }
        let power = s1 * s1 + s2 * s2 - c * s1 * s2
        return 2 * power.squareRoot() / Double(n)
    }

    /// Every tone's level in left and right is the downmix's gain times its level (each
    /// within 0.1 %, and below −100 dB where the downmix sends nothing).
    private func assertDownmixed(left: [Float], right: [Float], _ downmix: StereoDownmix, _ where_: String,
                                 file: StaticString = #filePath, line: UInt = #line) {
        // Half a second from 0.5 s: clear of the start, whole cycles of every tone.
        let window = 24000..<48000
        XCTAssertGreaterThanOrEqual(min(left.count, right.count), window.upperBound, "\(where_): too short", file: file, line: line)
        guard min(left.count, right.count) >= window.upperBound else { return }
        var worstRatio = 1.0, loudestAbsent = 0.0
        defer { print("\(where_): tones within \(String(format: "%.4f", abs(20 * log10(worstRatio)))) dB of the downmix, absent ones at most \(String(format: "%.1f", 20 * log10(max(loudestAbsent, 1e-12)))) dBFS") }
        for (k, hz) in MultichannelPlaybackTests.tones.enumerated() {
            for (side, signal, gain) in [("L", left, downmix.leftGains[k]), ("R", right, downmix.rightGains[k])] {
                let measured = MultichannelPlaybackTests.level(of: hz, in: signal, window)
                let expected = Double(gain) * MultichannelPlaybackTests.levels[k]
                if expected == 0 { loudestAbsent = max(loudestAbsent, measured) } else if abs(log(measured / expected)) > abs(log(worstRatio)) { worstRatio = measured / expected }
                if expected == 0 {
                    XCTAssertLessThan(measured, 1e-5, "\(where_): \(downmix.layout.names[k]) (\(hz) Hz) must not reach \(side)", file: file, line: line)
                } else {
                    XCTAssertEqual(measured / expected, 1, accuracy: 1e-3,
                                   "\(where_): \(downmix.layout.names[k]) (\(hz) Hz) in \(side) at \(measured), want \(expected)", file: file, line: line)
                }
            }
        }
    }

    private func export(_ session: Session, frames: Int64) throws -> (left: [Float], right: [Float]) {
        let out = folder.exportsFolder + "/mix-\(UUID().uuidString).wav"
        _ = try Mixdown(Mixdown.Request(session: session, folder: folder, range: FrameRange(startFrame: 0, endFrame: frames),
                                        outputPath: out, container: .wav, encoding: .float32)).run()
        let reader = try AudioFileReader(path: out)
        var left: [Float] = [], right: [Float] = []
        _ = try reader.forEachBlock { channels, n in
            left += UnsafeBufferPointer(start: channels[0], count: n)
            right += UnsafeBufferPointer(start: channels[1], count: n)
        }
        return (left, right)
    }

    /// The engine playing `session` from 0 on an unpaced device that keeps both channels.
    private func playLive(_ session: Session, frames: Int) throws -> (left: [Float], right: [Float], status: EngineStatus) {
        let device = StereoTapDevice(capacityFrames: frames + 4096)
        let engine = Engine(device: device)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        engine.setEndFrame(Int64(frames))
        engine.play()
        try engine.start()
        let deadline = Date().addingTimeInterval(60)
        while engine.status().transport != .stopped || engine.status().deviceFrame == 0, Date() < deadline { usleep(1000) }
        let status = engine.status()
        _ = engine.close()
        return (device.played(0), device.played(1), status)
    }

    func testAFiveOneRegionIsHeardLiveAndExportedWithTheStatedDownmix() throws {
        let s = try session()
        let downmix = StereoDownmix(layout: ChannelLayout(channelCount: 6, positions: [.left, .right, .center, .lfe, .rearLeft, .rearRight]))
        XCTAssertEqual(downmix.rule, .bs775)
        let spec = try GraphSpec(session: s, folder: folder)
        XCTAssertEqual(spec.tracks[0].channelCount, 2, "a stereo track")

        let live = try playLive(s, frames: 96000)
        XCTAssertNil(live.status.lastError)
        XCTAssertEqual(live.status.underrunFrames, 0, "the disk kept up")
        assertDownmixed(left: live.left, right: live.right, downmix, "live")

        let mix = try export(s, frames: 96000)
        XCTAssertEqual(mix.left.count, 96000)
        assertDownmixed(left: mix.left, right: mix.right, downmix, "export")
        // Live and export read through the same streams: the same samples where both roll.
        let offset = zip(live.left.indices, live.left).first { abs($0.1) > 1e-4 }?.0 ?? 0
        let firstMix = zip(mix.left.indices, mix.left).first { abs($0.1) > 1e-4 }?.0 ?? 0
        let shift = offset - firstMix
        var worst: Float = 0
        for i in 30000..<60000 where i + shift < live.left.count {
            worst = max(worst, abs(live.left[i + shift] - mix.left[i]), abs(live.right[i + shift] - mix.right[i]))
        }
        XCTAssertLessThan(worst, 1e-6, "live (from device frame \(shift)) and export differ by \(worst)")
    }

    func testAFileWithoutALayoutAlternatesItsChannelsLeftAndRightAtMinus3dB() throws {
        let s = try session(positions: nil)
        let downmix = StereoDownmix(layout: ChannelLayout(channelCount: 6, positions: nil))
        XCTAssertEqual(downmix.rule, .alternating)
        let mix = try export(s, frames: 96000)
        assertDownmixed(left: mix.left, right: mix.right, downmix, "export")
        let live = try playLive(s, frames: 96000)
        assertDownmixed(left: live.left, right: live.right, downmix, "live")
    }

    /// The per-track renderer (freeze) reads tracks through the same streams: a frozen 5.1
    /// region holds the same downmix.
    func testFreezingAFiveOneTrackRendersTheDownmix() throws {
        let s = try session()
        let downmix = StereoDownmix(layout: ChannelLayout(channelCount: 6, positions: [.left, .right, .center, .lfe, .rearLeft, .rearRight]))
        let frozen = try TrackFreeze.render(session: s, folder: folder, track: 0).frozen
        let channels = try Self.readAll(folder.absolutePath(of: frozen.file))
        XCTAssertEqual(channels.count, 2)
        assertDownmixed(left: channels[0], right: channels[1], downmix, "frozen")
    }

    /// A 5.1 region at half speed plays from its stretched render in the cache, which keeps
    /// the file's layout: the same downmix (levels within the stretcher's 0.5 dB), not the
    /// one for a file without a layout (which would put L at −3 dB and the LFE in R).
    func testAStretchedFiveOneRegionKeepsItsLayoutAndDownmix() throws {
        var s = try session(seconds: 1)
        s.tracks[0].regions[0].rate = 0.5
        s.tracks[0].regions[0].lengthFrames = 96000
        let mix = try export(s, frames: 96000)
        let window = 24000..<72000
        let g = Double(StereoDownmix.minus3dB)
        let expected: [(k: Int, left: Double, right: Double)] = [(0, 1, 0), (1, 0, 1), (2, g, g), (3, 0, 0), (4, g, 0), (5, 0, g)]
        var worstDecibels = 0.0
        defer { print("stretched 0.5x: tones within \(String(format: "%.3f", worstDecibels)) dB of the downmix") }
        for e in expected {
            let hz = MultichannelPlaybackTests.tones[e.k], level = MultichannelPlaybackTests.levels[e.k]
            for (side, signal, gain) in [("L", mix.left, e.left), ("R", mix.right, e.right)] {
                let measured = MultichannelPlaybackTests.level(of: hz, in: signal, window)
                if gain == 0 {
                    XCTAssertLessThan(measured, 0.01 * level, "\(hz) Hz must not reach \(side)")
                } else {
                    worstDecibels = max(worstDecibels, abs(20 * log10(measured / (gain * level))))
                    XCTAssertEqual(20 * log10(measured / (gain * level)), 0, accuracy: 0.5, "\(hz) Hz in \(side)")
                }
            }
        }
    }

    private static func readAll(_ path: String) throws -> [[Float]] {
        let reader = try AudioFileReader(path: path)
        var out = [[Float]](repeating: [], count: reader.channelCount)
        _ = try reader.forEachBlock { channels, n in
            for c in 0..<channels.count { out[c] += UnsafeBufferPointer(start: channels[c], count: n) }
        }
        return out
    }
}

/// An unpaced playback device that keeps what both channels play, in buffers allocated up
/// front (the audio thread writes into them; nothing allocates there).
private final class StereoTapDevice: PeriodDevice, @unchecked Sendable {
    var configuration: DeviceConfiguration
    let driver = PeriodDriver()
    private let left: UnsafeMutablePointer<Float>
    private let right: UnsafeMutablePointer<Float>
    private let capacityFrames: Int
    private let written = Atomic<Int>(0)

    init(capacityFrames: Int, periodFrames: Int = 256) {
        configuration = DeviceConfiguration(name: "stereo-tap", sampleRate: 48000, captureChannels: 0, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: 2 * periodFrames,
                                            captureFormat: nil, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: 0, linked: false)
        // No clock: the engine waits for its disk rather than play silence.
        configuration.isPaced = false
        self.capacityFrames = capacityFrames
        left = .allocate(capacity: capacityFrames)
        left.initialize(repeating: 0, count: capacityFrames)
        right = .allocate(capacity: capacityFrames)
        right.initialize(repeating: 0, count: capacityFrames)
    }

    deinit {
        left.deallocate()
        right.deallocate()
    }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

    /// Audio thread: nothing to capture.
    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult { .ok }

    /// Audio thread: copies into the preallocated buffers, no allocation.
    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        let at = written.load(ordering: .relaxed)
        let n = min(frameCount, capacityFrames - at)
        if n > 0 {
            (left + at).update(from: channels[0], count: n)
            (right + at).update(from: channels[1], count: n)
        }
        written.store(at + max(n, 0), ordering: .releasing)
        return .ok
    }

    /// What channel `c` played so far. Control thread.
    func played(_ c: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: c == 0 ? left : right, count: written.load(ordering: .acquiring)))
    }
}
