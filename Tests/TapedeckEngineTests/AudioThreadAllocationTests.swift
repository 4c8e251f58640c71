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
    /// A session of `tracks` stereo tracks with chains on every track and the master.
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
        session.masterChain = "eq,limiter"
        return (session, folder)
    }

    private func run(speed: TimePitchSettings?, changeTo: TimePitchSettings?, inputChain: String) throws -> Int64 {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try session(in: dir, tracks: 3)
        var plan = try PlaybackPlan(session: session, folder: folder, from: 0)
        if let speed { plan.timePitch = speed }
        var take = TakeRequest(path: dir + "/take.wav", container: .wav, encoding: .int24, deviceChannels: [1], maxFrames: 40_000)
        take.inputChain = try Chain(parsing: inputChain)
        let probe = AllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        let engine = try Engine(device: LoopbackDevice(periodFrames: 128, delayFrames: 300), take: take, playback: plan, options: options)
        try engine.start()
        if let changeTo { engine.setTimePitch(changeTo) }
        let deadline = Date().addingTimeInterval(60)
        while !engine.isDone && Date() < deadline { usleep(2000) }
        let load = engine.status().dspLoad
        let summary = try engine.finish()
        XCTAssertNil(summary.error)
        XCTAssertGreaterThan(load, 0, "DSP load is measured and reported")
        return probe.count.load(ordering: .acquiring)
    }

    func testTheAudioThreadNeverAllocatesWithChainsEverywhere() throws {
        XCTAssertEqual(try run(speed: nil, changeTo: nil, inputChain: "gate:-60,comp:-20"), 0)
    }

    func testTheAudioThreadNeverAllocatesWhileStretchingAndChangingSpeed() throws {
        let half = TimePitchSettings(speed: 0.5, mode: .stretch, pitchSemitones: 3)
        XCTAssertEqual(try run(speed: half, changeTo: TimePitchSettings(speed: 1.7, mode: .varispeed, pitchSemitones: 0),
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
