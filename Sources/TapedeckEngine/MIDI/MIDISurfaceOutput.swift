import TapedeckCore

/// One short MIDI message (a channel message, or SysEx up to 32 bytes: a scribble strip's
/// cell is 16) in a fixed block, so a lock-free ring can carry it.
public struct MIDIChunk: BitwiseCopyable {
    /// Bytes used.
    public var count: UInt8 = 0
    /// The bytes (only the first ``count`` mean anything).
    public var bytes: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    /// The most bytes a chunk holds.
    public static let capacity = 32
}

/// Feedback to a control surface over an output that sends on a real-time thread of its own
/// (a JACK MIDI port): the control side (the screen's thread) pushes whole messages, the
/// output's thread pops and writes them in order. One producer, one consumer.
public final class MIDISurfaceOutput: @unchecked Sendable {
    let ring = SPSCQueue<MIDIChunk>(capacity: 4096)

    /// An empty output.
    public init() {}

    /// Queues one whole message. False when it is empty, longer than a chunk, or the ring is
    /// full (nothing is sending: the output's thread stopped). Control thread.
    @discardableResult
    public func send(_ message: [UInt8]) -> Bool {
        guard !message.isEmpty, message.count <= MIDIChunk.capacity else { return false }
        var chunk = MIDIChunk()
        chunk.count = UInt8(message.count)
        withUnsafeMutableBytes(of: &chunk.bytes) { raw in
            for (i, b) in message.enumerated() { raw[i] = b }
        }
        return ring.push(chunk)
    }

    /// Hands the next message to `write` (its bytes, valid during the call) and takes it off
    /// the ring when `write` says it went out; false when there is none or it did not fit.
    /// The output's thread (a JACK process callback): no allocation, no locks.
    public func sendNext(_ write: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard var chunk = ring.peek() else { return false }
        let sent = withUnsafeBytes(of: &chunk.bytes) { raw in
            write(UnsafeRawBufferPointer(rebasing: raw[0..<Int(chunk.count)]))
        }
        if sent { _ = ring.pop() }
        return sent
    }
}
