import XCTest
import CTestSupport
@testable import TapedeckDSP

final class RealtimeTests: XCTestCase {
    /// Every built-in node once, with tempo-synced values so the sync paths run too.
    static let everyNode = "gain:-3,pan:0.3,eq:lowGain=3:midGain=-4:highGain=2,hpf:60,lpf:12khz,"
        + "comp:threshold=-24:ratio=4,gate:-70,limiter:ceiling=-1,delay:1/8:feedback=0.4,reverb:mix=0.3,"
        + "chorus,phaser,tremolo:1/16,saturate:drive=9,tone:220:wave=saw:level=-30,noise:-40:color=pink,"
        + "click:-20,sampler,midigate:attack=1"

    func testTheAllocationCounterSeesAnAllocationMadeOnPurpose() {
        td_alloc_count_begin()
        let p = UnsafeMutablePointer<Double>.allocate(capacity: 1000)
        let array = [Int](repeating: 7, count: 100 + Int.random(in: 0..<2))
        let count = td_alloc_count_end()
        p.deallocate()
        XCTAssertEqual(array.count > 0, true)
        XCTAssertGreaterThan(count, 0, "the malloc shim must count, or the no-allocation test proves nothing")
    }

    func testAChainOfEveryBuiltInNodeDoesNotAllocateIn1000Blocks() throws {
        let chain = try Chain(parsing: Self.everyNode)
        XCTAssertEqual(Set(chain.entries.map(\.node)), Set(NodeRegistry.builtIn.descriptors.map(\.name)),
                       "the chain must hold every built-in node")
        let instance = chain.instantiate()
        for case let sampler as SamplerNode in instance.nodes {
            sampler.setSample((0..<4800).map { Float(sin(Double($0) * 0.03)) * 0.4 }, sampleRate: 44100)
        }
        let frames = 256
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2), maxFrames: frames)
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: frames)
        let events: [MIDIEvent] = [.noteOn(note: 64, velocity: 100, frameOffset: 10), .noteOff(note: 64, frameOffset: 200)]
        var transport = TransportInfo(tempoBPM: 128, isPlaying: true)
        var noise = NoiseSource(seed: 7)
        var allocations: Int64 = 0
        events.withUnsafeBufferPointer { midi in
            for block in 0..<1000 {
                for c in 0..<2 { for i in 0..<frames { buffers[c][i] = noise.nextBipolar() * 0.5 } }
                if block == 500 {
                    instance.nodes[0].parameters.set(0, -20)   // parameter changes mid-run
                    instance.setBypassed(3, true)
                }
                if block == 600 { instance.setBypassed(3, false) }
                var context = RenderContext(inPlace: buffers.channels, frameCount: block % 7 == 0 ? 100 : frames,
                                            midiEvents: block % 4 == 0 ? midi : UnsafeBufferPointer(start: nil, count: 0),
                                            transport: transport)
                td_alloc_count_begin()
                instance.process(&context)
                allocations += td_alloc_count_end()
                transport = transport.advanced(by: context.frameCount)
            }
        }
        XCTAssertEqual(allocations, 0, "process() allocated")
        for c in 0..<2 { XCTAssertTrue(buffers[c].prefix(frames).allSatisfy(\.isFinite)) }
        instance.release()
    }

    func testAGainStepFromMinus40To0DecibelsNeverJumpsMoreThanTheSineItself() {
        // A 50 Hz sine at full scale moves at most 2π·50/48000 ≈ 0.0065 per frame; the 20 ms
        // ramp adds at most (1 - 0.01)/960 ≈ 0.001. Threshold 0.01: an unsmoothed step jumps ~1.
        let threshold: Float = 0.01
        let node = GainNode()
        node.parameters.set(0, -40)
        let frames = 256
        node.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: frames)
        let x = Offline.sine(50, amplitude: 1, count: 48000)
        var y: [Float] = []
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: frames)
        for block in 0..<(x.count / frames) {
            if block == 40 { node.parameters.set(0, 0) }
            if block == 120 { node.parameters.set(0, -40) }
            for i in 0..<frames { buffers[0][i] = x[block * frames + i] }
            var context = RenderContext(inPlace: buffers.channels, frameCount: frames)
            node.process(&context)
            y += buffers[0].prefix(frames)
        }
        let maxJump = zip(y, y.dropFirst()).map { abs($1 - $0) }.max()!
        XCTAssertLessThan(maxJump, threshold)
        XCTAssertEqual(Offline.peak(y, 20000..<30000), 1, accuracy: 0.01, "the step did arrive at 0 dB")
    }

    func testFilterAndDelayParameterStepsDoNotClick() throws {
        let instance = try Chain(parsing: "lpf:200,delay:100ms:feedback=0:mix=0.5").instantiate()
        let frames = 128
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 1), maxFrames: frames)
        let x = Offline.sine(60, amplitude: 1, count: 48000)
        let buffers = ChannelBuffers(channelCount: 1, capacityFrames: frames)
        var y: [Float] = []
        for block in 0..<(x.count / frames) {
            if block == 150 { instance.nodes[0].parameters.set(0, 8000); instance.nodes[1].parameters.set(0, 30) }
            for i in 0..<frames { buffers[0][i] = x[block * frames + i] }
            var context = RenderContext(inPlace: buffers.channels, frameCount: frames)
            instance.process(&context)
            y += buffers[0].prefix(frames)
        }
        let maxJump = zip(y, y.dropFirst()).dropFirst(9600).map { abs($1 - $0) }.max()!
        // A 60 Hz unit sine moves ≤ 0.008 per frame; allow the glides a little on top.
        XCTAssertLessThan(maxJump, 0.02)
    }

    func testParametersClampOnSetAndReadBackAtomically() {
        let node = HighPassNode()
        node.parameters.set("cutoff", 1e9)
        XCTAssertEqual(node.parameters.value(0), 20_000)
        node.parameters.set("cutoff", -5)
        XCTAssertEqual(node.parameters.value(0), 10)
        let threads = 4
        DispatchQueue.concurrentPerform(iterations: threads) { t in
            for k in 0..<10_000 { node.parameters.set(1, Double(t) + Double(k % 10) * 0.1 + 0.1) }
        }
        XCTAssertTrue((0.1...10).contains(node.parameters.value(1)))
    }
}
