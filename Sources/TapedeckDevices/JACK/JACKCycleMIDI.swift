import CJACK
import TapedeckEngine

/// The JACK client's MIDI ports within a cycle. What the MIDI inputs hold for the cycle is
/// handed to the engine block by block (``AudioDeviceMIDIClient/receiveMIDI(_:frameOffset:)``)
/// at each message's frame in its block, and what the engine sends on after a block
/// (``AudioDeviceMIDIClient/sendMIDI(_:)``) is written to every MIDI output at the same
/// frame of the cycle: no timestamps, no ring, no period of waiting — JACK MIDI arrives with
/// the cycle it belongs to.
///
/// Audio thread only, except ``init(inputs:outputs:)`` and `deinit`.
final class JACKCycleMIDI {
    let inputCount: Int
    let outputCount: Int
    private let inPorts: UnsafeMutablePointer<OpaquePointer?>
    private let outPorts: UnsafeMutablePointer<OpaquePointer?>
    /// This cycle's buffers, event counts, and each input's next event.
    private let inBuffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let outBuffers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let counts: UnsafeMutablePointer<UInt32>
    private let next: UnsafeMutablePointer<UInt32>
    /// The frame of the last message written this cycle (JACK wants them in order).
    private var lastSent: UInt32 = 0
    /// Messages that came before an engine was attached, each as a two-byte length and its
    /// bytes: the ports are connected as the device opens, and the engine starts only once its
    /// first graph is built (seconds on a busy machine or for a big session). A surface's first
    /// press or handshake in between is kept and handed over at the start of the engine's
    /// first cycle, not lost. What does not fit is dropped, oldest kept.
    private let kept: UnsafeMutablePointer<UInt8>
    private var keptBytes = 0
    static let keptCapacity = 16_384

    /// The client's registered MIDI ports. Control thread.
    init(inputs: [OpaquePointer], outputs: [OpaquePointer]) {
        inputCount = inputs.count
        outputCount = outputs.count
        inPorts = .table(inputs)
        outPorts = .table(outputs)
        inBuffers = .allocate(capacity: max(inputs.count, 1))
        inBuffers.initialize(repeating: nil, count: max(inputs.count, 1))
        outBuffers = .allocate(capacity: max(outputs.count, 1))
        outBuffers.initialize(repeating: nil, count: max(outputs.count, 1))
        counts = .allocate(capacity: max(inputs.count, 1))
        counts.initialize(repeating: 0, count: max(inputs.count, 1))
        next = .allocate(capacity: max(inputs.count, 1))
        next.initialize(repeating: 0, count: max(inputs.count, 1))
        kept = .allocate(capacity: JACKCycleMIDI.keptCapacity)
    }

    deinit {
        inPorts.deallocate()
        outPorts.deallocate()
        inBuffers.deallocate()
        outBuffers.deallocate()
        counts.deallocate()
        next.deallocate()
        kept.deallocate()
    }

    /// Takes the cycle's buffers and clears the outputs (a MIDI output JACK finds uncleared
    /// would send last cycle's messages again). Called every cycle, rendered or not.
    ///
    /// Audio thread: no allocation, no locks.
    func beginCycle(_ nframes: UInt32) {
        for i in 0..<inputCount {
            inBuffers[i] = jack_port_get_buffer(inPorts[i], nframes)
            if let b = inBuffers[i] { counts[i] = jack_midi_get_event_count(b) } else { counts[i] = 0 }
            next[i] = 0
        }
        for i in 0..<outputCount {
            outBuffers[i] = jack_port_get_buffer(outPorts[i], nframes)
            if let b = outBuffers[i] { jack_midi_clear_buffer(b) }
        }
        lastSent = 0
    }

    /// Hands the engine every input message at a frame in `start..<end` of the cycle, at
    /// its frame within the block that starts at `start` (the last block takes the rest).
    ///
    /// Audio thread: no allocation, no locks.
    func deliver(to client: any AudioDeviceMIDIClient, from start: Int, until end: Int) {
        var event = jack_midi_event_t()
        for i in 0..<inputCount {
            guard let buffer = inBuffers[i] else { continue }
            while next[i] < counts[i] {
                guard jack_midi_event_get(&event, buffer, next[i]) == 0 else {
                    next[i] += 1
                    continue
                }
                let frame = Int(event.time)
                if frame >= end { break }
                next[i] += 1
                guard let bytes = event.buffer, event.size > 0 else { continue }
                client.receiveMIDI(UnsafeBufferPointer(start: bytes, count: event.size), frameOffset: max(frame - start, 0))
            }
        }
    }

    /// Keeps this cycle's input messages for the engine that is not attached yet (after
    /// ``beginCycle(_:)``), as far as they fit.
    ///
    /// Audio thread: no allocation, no locks.
    func keepForEngine() {
        var event = jack_midi_event_t()
        for i in 0..<inputCount {
            guard let buffer = inBuffers[i] else { continue }
            for e in 0..<counts[i] where jack_midi_event_get(&event, buffer, e) == 0 {
                guard let bytes = event.buffer, event.size > 0, event.size <= Int(UInt16.max),
                      keptBytes + 2 + event.size <= JACKCycleMIDI.keptCapacity else { continue }
                kept[keptBytes] = UInt8(event.size & 0xFF)
                kept[keptBytes + 1] = UInt8(event.size >> 8)
                (kept + keptBytes + 2).update(from: bytes, count: event.size)
                keptBytes += 2 + event.size
            }
        }
    }

    /// Hands the engine, now attached, what was kept for it, in the order it came, at the
    /// cycle's first frame.
    ///
    /// Audio thread: no allocation, no locks.
    func deliverKept(to client: any AudioDeviceMIDIClient) {
        guard keptBytes > 0 else { return }
        var at = 0
        while at + 2 <= keptBytes {
            let size = Int(kept[at]) | Int(kept[at + 1]) << 8
            client.receiveMIDI(UnsafeBufferPointer(start: kept + at + 2, count: size), frameOffset: 0)
            at += 2 + size
        }
        keptBytes = 0
    }

    /// Writes what the engine sends on after the block at `start` to every MIDI output, at
    /// the same frame of the cycle (kept in order, within the cycle's `frameCount`).
    ///
    /// Audio thread: no allocation, no locks.
    func sendThru(from client: any AudioDeviceMIDIClient, at start: Int, frameCount n: Int) {
        guard outputCount > 0 else { return }
        client.sendMIDI { bytes, frame in
            let at = max(lastSent, UInt32(clamping: min(max(start + frame, 0), n - 1)))
            for i in 0..<outputCount {
                guard let b = outBuffers[i] else { continue }
                _ = jack_midi_event_write(b, at, bytes.baseAddress, bytes.count)
            }
            lastSent = at
        }
    }
}

extension UnsafeMutablePointer where Pointee == OpaquePointer? {
    /// A table of JACK ports the real-time thread reads without touching an array (at least
    /// one entry, nil when there are none). Control thread; deallocate it when done.
    static func table(_ ports: [OpaquePointer]) -> UnsafeMutablePointer<OpaquePointer?> {
        let table = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: max(ports.count, 1))
        table.initialize(repeating: nil, count: max(ports.count, 1))
        for (i, p) in ports.enumerated() { table[i] = p }
        return table
    }
}
