import XCTest
import CTestSupport
import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO
@testable import TapedeckEngine
import TapedeckFluidSynth

/// Counts the audio thread's own heap allocations and locks from its first period to its
/// last, and those of every worker of the process graph from its start to its end.
final class AllocationProbe: AudioThreadProbe, @unchecked Sendable {
    let count = Atomic<Int64>(-1)
    let locks = Atomic<Int64>(-1)
    let workerAllocations = Atomic<Int64>(0)
    let workerLocks = Atomic<Int64>(0)
    let workersSeen = Atomic<Int>(0)
    func audioThreadBegins() { td_alloc_count_begin() }
    func audioThreadEnds() {
        count.store(td_alloc_count_end(), ordering: .releasing)
        locks.store(td_lock_count_last(), ordering: .releasing)
    }
    func workerThreadBegins() { td_alloc_count_begin() }
    func workerThreadEnds() {
        workerAllocations.add(td_alloc_count_end(), ordering: .relaxed)
        workerLocks.add(td_lock_count_last(), ordering: .relaxed)
        workersSeen.add(1, ordering: .releasing)
    }

    /// Every count, checked: no allocation and no lock on the audio thread or on a worker,
    /// and the workers (`workers` of them) ran. Returns the audio thread's allocations.
    func checked(workers: Int, file: StaticString = #filePath, line: UInt = #line) -> Int64 {
        XCTAssertEqual(workersSeen.load(ordering: .acquiring), workers, "workers watched", file: file, line: line)
        XCTAssertEqual(workerAllocations.load(ordering: .relaxed), 0, "allocations on the workers", file: file, line: line)
        XCTAssertEqual(workerLocks.load(ordering: .relaxed), 0, "locks on the workers", file: file, line: line)
        XCTAssertEqual(locks.load(ordering: .acquiring), 0, "locks on the audio thread", file: file, line: line)
        return count.load(ordering: .acquiring)
    }
}

final class AudioThreadAllocationTests: XCTestCase {
    /// A session of `tracks` stereo tracks with chains on every track and the master, an
    /// armed track, a mono track with a chain, and a stereo and a mono track without one.
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
        // Tracks without a chain, stereo and mono: at speed they are mixed by the fused pass
        // straight from their rings (StripMixSink).
        session.tracks.append(Track(name: "plain", pan: -0.4,
                                    regions: [Region(file: "audio/t.wav", timelineStartFrame: 0, lengthFrames: Int64(frames))]))
        session.tracks.append(Track(name: "plain mono", pan: 1,
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
        // Two workers beside the audio thread: strips rendered in parallel and ahead.
        options.renderThreads = 3
        let device = XrunLoopbackDevice(periodFrames: 128, delayFrames: 300, xrunCycles: [300, 600])
        let engine = Engine(device: device, options: options)
        try engine.prepare(spec)
        if let speed { engine.setTimePitch(speed); engine.waitForTimePitch() }
        // Mirrored too (record --mirror): the audio thread fills the mirror's ring as well.
        var take = TakeRequest(track: 3, channelCount: 1, path: dir + "/take.wav", container: .wav, encoding: .int24)
        take.mirrorPath = dir + "/take-mirror.wav"
        let set = try engine.startTakes([take], gate: TakeGate(recordPoint: 0, latencyFrames: 300))
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
            engine.waitForTimePitch()
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
        let ahead = engine.graphs.last?.strips.reduce(Int64(0)) { $0 + ($1.ahead?.renderedBlocks.load(ordering: .relaxed) ?? 0) } ?? 0
        // (Only at 1×: under time-pitch the mix is read ahead by the stretcher instead.)
        if speed == nil { XCTAssertGreaterThan(ahead, 0, "the workers rendered playback ahead") }
        XCTAssertTrue(set.hasEnded)
        let outcome = engine.finish(set).first
        XCTAssertNotNil(outcome?.mirror, "the take was mirrored")
        XCTAssertEqual(outcome?.mirror?.frameCount, outcome?.frameCount, "the mirror holds what the take holds")
        let status = engine.status()
        engine.close()
        XCTAssertNil(status.lastError)
        XCTAssertEqual(status.xrunCount, 2, "the xruns happened inside the counted span")
        XCTAssertGreaterThan(load, 0, "DSP load is measured and reported")
        return probe.checked(workers: options.renderThreads - 1)
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

    /// Every MIDI path while the allocations are counted: two MIDI tracks (regions through the
    /// sampler and FluidSynth; the armed one hearing the inputs through FluidSynth) and an
    /// audio track with a MIDI gate; notes, controllers, pitch bend and MMC arriving from a
    /// thread of their own; MIDI thru drained by another; a fader and a node parameter bound
    /// to controllers; a MIDI take recording; the regions edited (a new playlist swapped into
    /// the playing strip); loop on, a locate, stop and play again.
    func testTheAudioThreadNeverAllocatesOnTheMIDIPaths() throws {
        NodeRegistry.install(type: GMSynthNode.self)
        guard GMSynthNode.defaultFontPaths.contains(where: { access($0, R_OK) == 0 }) else {
            throw XCTSkip("no General MIDI SoundFont installed (apt-get install fluid-soundfont-gm)")
        }
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try self.session(in: dir, tracks: 1)
        session.tracks[0].playbackChain = "midigate,hpf:80"
        try FileManager.default.createDirectory(atPath: folder.samplesFolder, withIntermediateDirectories: true)
        try MIDIFixture.writeClick(folder.samplesFolder + "/click.wav")
        var events: [MIDISequence.Event] = []
        for f in stride(from: Int64(0), to: 48_000, by: 1200) {
            events += [.init(frame: f, status: 0x90, data1: UInt8(48 + f / 1200 % 24), data2: 100),
                       .init(frame: f + 900, status: 0x80, data1: UInt8(48 + f / 1200 % 24)),
                       .init(frame: f + 10, status: 0xB0, data1: 1, data2: UInt8(f / 1200 % 128))]
        }
        let sequence = MIDISequence(events: events, lengthFrames: 48_000)
        let file = try MIDIRegionFile.writeNew(sequence, base: "notes", name: nil, folder: folder, tempoMap: session.tempoMap)
        let region = Region(file: file, timelineStartFrame: 0, lengthFrames: 48_000, isMIDI: true)
        session.tracks[0].regions.append(region)
        session.tracks[1] = Track(name: "synth", playbackChain: "sampler:file=samples/click.wav,gm,reverb,limiter", regions: [region], isMIDI: true)
        session.tracks.append(Track(name: "played", armed: true, playbackChain: "gm", isMIDI: true))
        session.midiBindings = [MIDIBinding(controller: 7, kind: .fader, track: "synth"),
                                MIDIBinding(controller: 74, kind: .parameter, track: "t0", node: 2, parameter: "cutoff")]
        let probe = AllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        options.renderThreads = 3
        let device = XrunLoopbackDevice(periodFrames: 128, delayFrames: 300, xrunCycles: [400])
        let engine = Engine(device: device, options: options)
        let input = MIDIInputPort(name: "keys", surface: .mackie)
        let thru = MIDIOutputPort(name: "thru")
        engine.attach(midiInput: input)
        engine.attach(midiOutput: thru)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try FileManager.default.createDirectory(atPath: folder.midiFolder, withIntermediateDirectories: true)
        let set = try engine.startTakes([], gate: TakeGate(recordPoint: 0, latencyFrames: engine.midiLatencyFrames),
                                        midi: [MIDITakeRequest(track: 2, path: folder.midiFolder + "/take.mid", tempoMap: session.tempoMap)])
        engine.play()
        try engine.start()
        let playing = Atomic<Bool>(true)
        let rounds = Atomic<Int>(0)
        let player = Thread {
            var k = 0
            let mmc: [UInt8] = [0xF0, 0x7F, 0x7F, 0x06, 0x44, 0x06, 0x01, 0x20, 0x00, 0x00, 0x00, 0x00, 0xF7]
            while playing.load(ordering: .acquiring) {
                let now = MIDIInputPort.now()
                input.receive(status: 0x90, data1: UInt8(60 + k % 12), data2: 90, atNanoseconds: now)
                input.receive(status: 0xB0, data1: 7, data2: UInt8(k % 128), atNanoseconds: now)
                input.receive(status: 0xB0, data1: 74, data2: UInt8((k * 7) % 128), atNanoseconds: now)
                input.receive(status: 0xE0, data1: 0, data2: UInt8(k % 128), atNanoseconds: now)
                input.receive(status: 0x80, data1: UInt8(60 + k % 12), data2: 0, atNanoseconds: now)
                if k % 50 == 0 { mmc.withUnsafeBufferPointer { input.receive($0, atNanoseconds: now) } }
                while thru.next() != nil {}
                k += 1
                rounds.store(k, ordering: .releasing)
                usleep(1000)
            }
        }
        player.start()
        // The device runs unpaced: on a loaded machine the whole run could pass before the
        // player thread is first scheduled. Wait until it has played (MMC included).
        let deadline = Date().addingTimeInterval(30)
        while rounds.load(ordering: .acquiring) < 120 && Date() < deadline { usleep(1000) }
        func waitFrames(_ frames: Int64) {
            let until = engine.status().deviceFrame + frames
            let deadline = Date().addingTimeInterval(30)
            while engine.status().deviceFrame < until && engine.isRunning && Date() < deadline { usleep(1000) }
        }
        waitFrames(30_000)
        // The notes quantised (another file): a new playlist for the same strips.
        var edited = session
        let moved = try MIDIRegionFile.writeNew(sequence.quantized(gridFrames: 6000, strength: 1), base: "notes-q", name: nil,
                                                folder: folder, tempoMap: session.tempoMap)
        edited.tracks[1].regions[0].file = moved
        try engine.apply(try GraphSpec(session: edited, folder: folder))
        waitFrames(20_000)
        engine.setLoop(FrameRange(startFrame: 0, endFrame: 20_000), enabled: true)
        waitFrames(40_000)
        engine.endTakes()
        engine.locate(to: 7_000)
        waitFrames(10_000)
        engine.stop()
        waitFrames(5_000)
        engine.play()
        waitFrames(10_000)
        playing.store(false, ordering: .releasing)
        while !player.isFinished { usleep(1000) }
        _ = engine.finish(set)
        let machine = engine.drainMachineCommands()
        let moves = engine.drainControllerMoves()
        let status = engine.status()
        engine.close()
        XCTAssertNil(status.lastError)
        XCTAssertFalse(machine.isEmpty, "MMC arrived")
        XCTAssertFalse(moves.isEmpty, "controllers moved what they are bound to")
        XCTAssertGreaterThan(set.midiOutcomes.first?.eventCount ?? 0, 0, "the take kept what was played")
        XCTAssertEqual(probe.checked(workers: 2), 0)
    }

    /// A backend's own MIDI (the JACK backend's ports): handed to the cycle and taken back
    /// for thru, MMC and surface buttons included, as its process thread does each cycle.
    func testABackendsOwnMIDIPassesWithoutAllocating() {
        let engine = Engine(device: XrunLoopbackDevice(periodFrames: 128, delayFrames: 0, xrunCycles: []))
        engine.setControlSurface(.mackie)
        let core = engine.core
        // Note on, MMC play, the Mackie play button, a controller, a program change; in memory
        // of their own, so the loop below allocates nothing of the test's.
        let messages: [[UInt8]] = [[0x90, 60, 100], [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7], [0x90, 94, 127], [0xB0, 7, 64], [0xC0, 5]]
        let buffers = messages.map { m -> UnsafeBufferPointer<UInt8> in
            let p = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: m.count)
            _ = p.initialize(from: m)
            return UnsafeBufferPointer(p)
        }
        defer { for b in buffers { b.deallocate() } }
        let table = UnsafeMutablePointer<UnsafeBufferPointer<UInt8>>.allocate(capacity: buffers.count)
        table.initialize(from: buffers, count: buffers.count)
        defer { table.deallocate() }
        var sent = 0
        var frames = 0
        td_alloc_count_begin()
        for cycle in 0..<50 {
            for k in 0..<5 { core.receiveMIDI(table[k], frameOffset: k * 10 + cycle % 7) }
            core.gatherMIDI(nil, frameCount: 128, now: Int64(cycle) * 2_666_667)
            core.sendMIDI { bytes, frame in
                sent += bytes.count
                frames += frame
            }
        }
        let allocations = td_alloc_count_end()
        let machine = engine.drainMachineCommands()
        engine.close()
        XCTAssertEqual(allocations, 0)
        XCTAssertEqual(sent, 50 * (3 + 3 + 2), "notes, controllers and program changes went on as thru; MMC and the button did not")
        XCTAssertEqual(frames, (0..<50).reduce(0) { $0 + 3 * ($1 % 7) } + 50 * (0 + 30 + 40), "thru keeps each message's frame")
        XCTAssertEqual(machine.count, 100, "MMC play and the surface's play button each cycle reached the control thread")
    }

    func testTheProbeReallySeesAllocationsOnTheAudioThread() {
        // Proof the counter counts on the thread that began it, so a zero above means zero.
        let probe = AllocationProbe()
        let done = Atomic<Bool>(false)
        let thread = Thread {
            probe.audioThreadBegins()
            let p = malloc(64)
            free(p)
            var mutex = pthread_mutex_t()
            pthread_mutex_init(&mutex, nil)
            pthread_mutex_lock(&mutex)
            pthread_mutex_unlock(&mutex)
            pthread_mutex_destroy(&mutex)
            probe.audioThreadEnds()
            done.store(true, ordering: .releasing)
        }
        thread.start()
        while !done.load(ordering: .acquiring) { usleep(1000) }
        XCTAssertGreaterThan(probe.count.load(ordering: .acquiring), 0)
        XCTAssertEqual(probe.locks.load(ordering: .acquiring), 1, "a mutex taken on the counted thread is seen")
    }

    /// The same for the workers: the engine hands its probe to every worker it starts, and a
    /// worker's allocation (here a node that allocates in its process, on a worker's strip)
    /// is seen.
    func testTheProbeReallySeesAllocationsOnTheWorkers() throws {
        let dir = try Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let (session, folder) = try session(in: dir, tracks: 8)
        let probe = AllocationProbe()
        var options = EngineOptions()
        options.audioThreadProbe = probe
        options.renderThreads = 2
        let device = FreewheelDevice(sampleRate: 48000, playbackChannels: 2, periodFrames: 256)
        let engine = Engine(device: device, options: options)
        try engine.prepare(try GraphSpec(session: session, folder: folder))
        try engine.start()
        engine.play()
        // An allocation on the worker thread itself, through the job the pool runs there
        // (each long enough that the worker wakes and takes some).
        engine.core.runEach(count: 64) { _ in
            usleep(1000)
            free(malloc(32))
        }
        for _ in 0..<50 { _ = device.cycle() }
        device.stop()
        engine.close()
        XCTAssertEqual(probe.workersSeen.load(ordering: .acquiring), 1)
        XCTAssertGreaterThan(probe.workerAllocations.load(ordering: .relaxed), 0, "the worker's allocations are counted")
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

    /// Paced, as its configuration says, at four times real time: a device that never waits
    /// would leave no idle time between periods, which the engine's real-time threads (the
    /// audio thread, and the workers rendering ahead) would fill, keeping the writers off
    /// every core.
    func write(from channels: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount: Int) -> DeviceIOResult {
        for i in 0..<frameCount { ring[(writeFrame + i) & (size - 1)] = channels[0][i] }
        writeFrame += frameCount
        written += Int64(frameCount)
        if startedAt == 0 { startedAt = monotonicNanoseconds() }
        let due = startedAt + written * 1_000_000_000 / Int64(4 * configuration.sampleRate)
        let now = monotonicNanoseconds()
        if due > now { sleepNanoseconds(due - now) }
        return .ok
    }
    private var written: Int64 = 0
    private var startedAt: Int64 = 0

    /// Its clock, told exactly one cycle and as a coarse reading the next, so stamped MIDI
    /// is placed both ways (against the device's clock, through the delay-locked loop).
    func periodTime(frameCount: Int) -> DevicePeriodTime? {
        DevicePeriodTime(beganNanoseconds: monotonicNanoseconds(), isExact: cycle % 2 == 0)
    }
}
