import XCTest
import CTestSupport
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine

/// Counts the audio thread's own heap allocations from its first period to its last.
private final class AllocationProbe: AudioThreadProbe, @unchecked Sendable {
    let count = Atomic<Int64>(-1)
    func audioThreadBegins() { td_alloc_count_begin() }
    func audioThreadEnds() { count.store(td_alloc_count_end(), ordering: .releasing) }
}

final class AudioThreadAllocationTests: XCTestCase {
    /// A session of `tracks` stereo tracks with chains on every track and the master, an
    /// armed track, and a mono track with a chain.
    private func session(in dir: String, tracks: Int) throws -> (Session, SessionFolder) {
        let folder = SessionFolder(path: dir + "/s")
        var session = Session(sampleRate: 48000)
        try folder.create(session)
        let frames = 48000
        let tone = (0..<frames).map { Float(0.3 * sin(Double($0) * 0.05)) }
        let w = try AudioFileWriter(path: folder.audioFolder + "/t.wav",
                                    format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 2))
        try tone.withUnsafeBufferPointer { p in try w.write([p.baseAddress!, p.baseAddress!], frameCount: frames) }
        try w.close()
        for i in 0..<tracks {
            session.tracks.append(Track(name: "t\(i)", playbackChain: "hpf:80,comp:-18,delay:1/8,limiter",
                                        regions: [Region(file: "audio/t.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]))
        }
        session.tracks.append(Track(name: "rec", armed: true))
        // A mono track with the engine bench's chain: the EQ's one-pass mono cascade and the
        // compressor's eight-frame curve run on the audio thread too.
        let m = try AudioFileWriter(path: folder.audioFolder + "/m.wav",
                                    format: AudioFileFormat(container: .wav, encoding: .float32, sampleRate: 48000, channelCount: 1))
        try tone.withUnsafeBufferPointer { p in try m.write([p.baseAddress!], frameCount: frames) }
        try m.close()
        session.tracks.append(Track(name: "mono", playbackChain: "hpf:80,comp:-18,eq:midGain=-6,gain:-3",
                                    regions: [Region(file: "audio/m.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]))
        session.masterChain = "eq,limiter"
        return (session, folder)
    }

    /// Runs the engine through everything a session of use does while the audio thread's
    /// allocations are counted: play, a recording pass through an input chain, fader moves,
    /// mutes and solos, a graph swap (a chain edited, a region moved: new strips with
    /// fallbacks), loop on and off, a locate, device xruns, speed changes, stop, a new start
    /// and loudness resets while rolling (new meters handed over).
    private func run(speed: TimePitchSettings?, changeTo: [TimePitchSettings] = [], inputChain: String) throws -> Int64 {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try session(in: dir, tracks: 3)
        var listening = session
        listening.tracks[3].inputChain = inputChain
        let spec = try GraphSpec(session: listening, folder: folder)
        let probe = AllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        options.handoverFrames = 2048
        let device = XrunLoopbackDevice(periodFrames: 128, delayFrames: 300, xrunCycles: [300, 600])
        let engine = Engine(device: device, options: options)
        try engine.prepare(spec)
        if let speed { engine.setTimePitch(speed) }
        let set = try engine.startTakes([TakeRequest(track: 3, channelCount: 1, path: dir + "/take.wav", container: .wav, encoding: .int24)],
                                        gate: TakeGate(recordPoint: 0, latencyFrames: 300))
        engine.play()
        try engine.start()
        func waitFrames(_ frames: Int64) {
            let until = engine.status().deviceFrame + frames
            let deadline = Date().addingTimeInterval(30)
            while engine.status().deviceFrame < until && engine.isRunning && Date() < deadline { usleep(1000) }
        }
        waitFrames(20_000)
        for i in 0..<20 {
            engine.setMixer(track: i % 3, gainDecibels: Double(-i), pan: Double(i % 3) - 1, mute: i % 5 == 0, solo: i % 7 == 0)
        }
        for change in changeTo {
            engine.setTimePitch(change)
            waitFrames(5_000)
        }
        var edited = listening
        edited.tracks[0].playbackChain = "hpf:120,delay:1/4"
        edited.tracks[1].regions[0].timelineStartFrame = 1000
        edited.tracks[2].playbackChain = "hpf:200,comp:-12,delay:1/8,limiter"  // same nodes: retuned in place
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        waitFrames(20_000)
        engine.setLoop(FrameRange(startFrame: 0, endFrame: 30_000), enabled: true)
        waitFrames(40_000)
        engine.endTakes()
        engine.setLoop(nil, enabled: false)
        engine.locate(to: 12_345)
        waitFrames(20_000)
        engine.stop()
        waitFrames(5_000)
        // Start again and reset the meters while rolling: the master's loudness meter is
        // replaced (a new one handed over, the old one handed back) without allocating.
        engine.play()
        waitFrames(5_000)
        engine.resetLoudness()
        waitFrames(5_000)
        engine.resetLoudness()
        waitFrames(5_000)
        XCTAssertNotNil(engine.loudness(), "the master bus is measured")
        engine.stop()
        waitFrames(5_000)
        let load = engine.status().dspLoad
        XCTAssertTrue(set.hasEnded)
        _ = engine.finish(set)
        let status = engine.status()
        engine.close()
        XCTAssertNil(status.lastError)
        XCTAssertEqual(status.xrunCount, 2, "the xruns happened inside the counted span")
        XCTAssertGreaterThan(load, 0, "DSP load is measured and reported")
        return probe.count.load(ordering: .acquiring)
    }

    func testTheAudioThreadNeverAllocatesWithChainsEverywhere() throws {
        XCTAssertEqual(try run(speed: nil, inputChain: "gate:-60,comp:-20"), 0)
    }

    func testTheAudioThreadNeverAllocatesWhileStretchingAndChangingSpeed() throws {
        let half = TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 3)
        XCTAssertEqual(try run(speed: half, changeTo: [TimePitchSettings(speed: 1.7, mode: .varispeed, pitchSemitones: 0)],
                               inputChain: ""), 0)
    }

    /// The mix bus's time-pitch across its range while rolling: R2 to R3 above 4× (a switch
    /// of stretcher, restarted at the playhead), the extremes, varispeed and back, pitch
    /// shifts, and back to 1×, each with its FIFO refilled and the stretcher primed.
    func testTheMixBusTimePitchNeverAllocatesAcrossItsRange() throws {
        let changes: [TimePitchSettings] = [
            TimePitchSettings(speed: 8, mode: .stretch, pitchSemitones: 0),
            TimePitchSettings(speed: 32, mode: .stretch, pitchSemitones: -12),
            TimePitchSettings(speed: 1.0 / 32, mode: .stretch, pitchSemitones: 36),
            TimePitchSettings(speed: 1.0 / 32, mode: .varispeed, pitchSemitones: 0),
            TimePitchSettings(speed: 32, mode: .varispeed, pitchSemitones: 0),
            TimePitchSettings(speed: 3, mode: .stretch, pitchSemitones: -36),
            TimePitchSettings(speed: 1, mode: .stretch, pitchSemitones: 0),
        ]
        XCTAssertEqual(try run(speed: TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 0), changeTo: changes,
                               inputChain: ""), 0)
    }

    func testTheProbeReallySeesAllocationsOnTheAudioThread() {
        // Proof the counter counts on the thread that began it, so a zero above means zero.
        let probe = AllocationProbe()
        let done = Atomic<Bool>(false)
        let thread = Thread {
            probe.audioThreadBegins()
            let p = malloc(64)
            free(p)
            probe.audioThreadEnds()
            done.store(true, ordering: .releasing)
        }
        thread.start()
        while !done.load(ordering: .acquiring) { usleep(1000) }
        XCTAssertGreaterThan(probe.count.load(ordering: .acquiring), 0)
    }
}

/// A loopback cable (what is played comes back `delayFrames` later) whose device also
/// over-runs at the given cycles, losing 512 frames of time each.
private final class XrunLoopbackDevice: PeriodDevice, @unchecked Sendable {
    let configuration: DeviceConfiguration
    let driver = PeriodDriver()
    private let ring: UnsafeMutablePointer<Float>
    private let size = 1 << 16
    private var readFrame = 0
    private var writeFrame: Int
    private var cycle = 0
    private let xrunCycles: Set<Int>

    init(periodFrames: Int, delayFrames: Int, xrunCycles: Set<Int>) {
        configuration = DeviceConfiguration(name: "loop+xruns", sampleRate: 48000, captureChannels: 1, playbackChannels: 2,
                                            periodFrames: periodFrames, periodCount: 2, bufferFrames: delayFrames,
                                            captureFormat: .float32, playbackFormat: .float32,
                                            captureLatencyFrames: 0, playbackLatencyFrames: Int64(delayFrames), linked: true)
        ring = .allocate(capacity: size)
        ring.initialize(repeating: 0, count: size)
        writeFrame = delayFrames
        self.xrunCycles = xrunCycles
    }

    deinit { ring.deallocate() }

    func startStreams() throws(DeviceError) {}
    func stopStreams() {}

    func read(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        cycle += 1
        if xrunCycles.contains(cycle) { return .xrun(lostFrames: 512) }
        for i in 0..<frameCount { channels[0][i] = ring[(readFrame + i) & (size - 1)] }
        readFrame += frameCount
        return .ok
    }

    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount { ring[(writeFrame + i) & (size - 1)] = channels[0][i] }
        writeFrame += frameCount
        return .ok
    }
}
