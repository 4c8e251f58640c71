import CTestSupport
import Synchronization
import XCTest
import TapedeckCore
import TapedeckIO
import TapedeckEngine
@testable import TapedeckTransport

/// Counts the heap allocations and locks JACK's real-time thread makes from Tapedeck's first
/// cycle to its last (the process callback, and the sync and timebase callbacks on the same
/// thread), and those of the render's workers over their whole life.
private final class AllocationProbe: AudioThreadProbe, @unchecked Sendable {
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
}

final class JACKAllocationTests: XCTestCase {
    /// Everything a session of use on JACK does on its real-time thread — following and
    /// driving the transport, slow sync, publishing bar and beat, a recording pass from
    /// another program, another program's locate, buffer-size changes rendered in blocks,
    /// a stop, and MIDI from another program on Tapedeck's own MIDI port all the while (played
    /// into an armed instrument track, recorded into a MIDI take, sent on as thru) —
    /// allocates nothing there.
    func testJacksRealTimeThreadNeverAllocates() throws {
        _ = try JackFixture.start(self)
        let dir = try TransportFixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var (session, folder) = try TransportFixture.session(in: dir, signals: [TransportFixture.noise(48000 * 20, amplitude: 0.2)])
        session.tracks[0].playbackChain = "hpf:80,comp:-18,delay:1/8"
        session.tracks.append(Track(name: "Vocal", inputChannels: [1], armed: true, inputChain: "gain:-3"))
        session.tracks.append(Track(name: "Keys", armed: true, playbackChain: "sampler,lpf:cutoff=2000", isMIDI: true))
        try folder.save(session)
        let source = try JackProbe(name: "source", outputs: 1, toneHz: 500, amplitude: 0.3, onset: 0)
        // Notes, controllers and pitch bend every 1200 frames for the whole run (about 9 s).
        let keys = try JackProbe(name: "keys")
        let start = keys.now + 4800
        for k in 0..<360 {
            let at = start + Int64(k) * 1200
            keys.send(at: at, [0x90, UInt8(48 + k % 24), 100])
            keys.send(at: at + 100, [0xB0, 1, UInt8(k % 128)])
            keys.send(at: at + 200, [0xE0, 0, UInt8(k % 128)])
            keys.send(at: at + 600, [0x80, UInt8(48 + k % 24), 0])
        }
        let probe = AllocationProbe()
        var options = TransportOptions()
        options.engine.audioThreadProbe = probe
        // A worker beside JACK's thread: strips in parallel, playback rendered ahead.
        options.engine.renderThreads = 2
        let device = try JackTools.device(inputs: 1, outputs: 2, tracks: [("Vocal", [1])], timebase: true, tempo: session.tempoMap,
                                          midi: true)
        do {
            let transport = try Transport(session: session, folder: folder, device: device, options: options)
            source.connect("source:out_1", "tapedeck:Vocal_in")
            keys.connect("keys:midi_out", "tapedeck:midi_in")
            keys.connect("tapedeck:midi_out", "keys:midi_in")
            transport.play(from: 0)
            TransportFixture.waitFor(transport) { $0.positionFrame > 24000 }
            transport.locate(to: 96000)
            TransportFixture.waitFor(transport) { $0.positionFrame > 120_000 }
            JackTools.run(["/usr/bin/jack_bufsize", "512"])
            JackTools.transport("locate 200000")
            TransportFixture.waitFor(transport) { $0.positionFrame > 220_000 }
            transport.stop()
            TransportFixture.waitFor(transport) { $0.state == .stopped }
            try transport.record(RecordRequest(fromFrame: 240_000))
            TransportFixture.waitFor(transport) { $0.positionFrame > 290_000 }
            JackTools.run(["/usr/bin/jack_bufsize", "128"])
            let at = transport.snapshot().positionFrame
            TransportFixture.waitFor(transport) { $0.positionFrame > at + 24000 }
            transport.stop()
            TransportFixture.waitFor(transport) { $0.state == .stopped }
            XCTAssertEqual(transport.collectFinishedTakes().count, 2, "the pass recorded the voice and the keys")
            XCTAssertGreaterThan(keys.midiHeard().count, 100, "MIDI went on as thru")
            transport.close()
        }
        XCTAssertEqual(probe.count.load(ordering: .acquiring), 0, "allocations on JACK's real-time thread")
        XCTAssertEqual(probe.locks.load(ordering: .acquiring), 0, "locks on JACK's real-time thread")
        XCTAssertEqual(probe.workersSeen.load(ordering: .acquiring), 1, "the worker was watched")
        XCTAssertEqual(probe.workerAllocations.load(ordering: .relaxed), 0, "allocations on the worker")
        XCTAssertEqual(probe.workerLocks.load(ordering: .relaxed), 0, "locks on the worker")
    }
}
