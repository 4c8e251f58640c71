import XCTest
import CTestSupport
import TapedeckDSP
import TapedeckLV2

/// The audio-thread side of hosting: what runs in `process` must not allocate.
final class LV2RealtimeTests: XCTestCase {
    func testAChainOfPluginsDoesNotAllocateOnTheAudioThreadIn1000Blocks() throws {
        // Mono per channel (amp, the Butterworth filter), an instrument fed MIDI (EPiano), the
        // worker answering in real time (the convolver loading its preset), a stereo plugin
        // reporting latency (dpl).
        let text = "lv2:amp:-3,lv2:buttlow_iir:cutoff=3000,lv2:http://drobilla.net/plugins/mda/EPiano,"
            + "lv2:zeroconvolv-mono:@preset=No-OP Mono,lv2:dpl-stereo"
        let instance = try Chain(parsing: text, registry: LV2Test.registry).instantiate(registry: LV2Test.registry)
        let frames = 256
        instance.prepare(format: NodeFormat(sampleRate: 48000, channelCount: 2, isRealtime: true), maxFrames: frames)
        XCTAssertEqual(instance.problems, [])
        let buffers = ChannelBuffers(channelCount: 2, capacityFrames: frames)
        let events: [MIDIEvent] = [.noteOn(note: 64, velocity: 100, frameOffset: 10), .noteOff(note: 64, frameOffset: 200)]
        var transport = TransportInfo(tempoBPM: 128, isPlaying: true)
        var allocations: Int64 = 0
        var phase = 0.0
        events.withUnsafeBufferPointer { midi in
            for block in 0..<1000 {
                for i in 0..<frames {
                    phase += 2 * Double.pi * 440 / 48000
                    buffers[0][i] = Float(sin(phase) * 0.3)
                    buffers[1][i] = Float(sin(phase * 1.5) * 0.3)
                }
                if block == 500 { instance.nodes[0].parameters.set(0, -20) }
                if block == 600 { instance.reset() }
                var context = RenderContext(inPlace: buffers.channels, frameCount: block % 7 == 0 ? 100 : frames,
                                            midiEvents: block % 4 == 0 ? midi : UnsafeBufferPointer(start: nil, count: 0),
                                            transport: transport)
                td_alloc_count_begin()
                instance.process(&context)
                allocations += td_alloc_count_end()
                transport = transport.advanced(by: context.frameCount)
                if block % 50 == 0 { usleep(500) }   // give the worker thread a chance, as a device would
            }
        }
        XCTAssertEqual(allocations, 0, "process() allocated")
        for c in 0..<2 { XCTAssertTrue(buffers[c].prefix(frames).allSatisfy(\.isFinite)) }
        XCTAssertGreaterThan(Offline.peakOf(buffers), 0.001, "sound came through")
        instance.release()
    }
}

private enum Offline {
    static func peakOf(_ buffers: ChannelBuffers) -> Float {
        (0..<buffers.channelCount).map { buffers[$0].map(abs).max() ?? 0 }.max() ?? 0
    }
}
