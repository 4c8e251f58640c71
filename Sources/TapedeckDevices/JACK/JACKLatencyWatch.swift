import CJACK
import Synchronization
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// The latency of the client's ports as JACK computes it, kept current from JACK's latency
/// callback: JACK calls it after every connection change (and when asked to recompute, as
/// the device does after a buffer-size change), upstream clients first for capture and
/// downstream first for playback, once its own figures for the client's ports are set.
///
/// Tapedeck is a recorder and a player, not a pass-through: its outputs carry the timeline
/// (nothing captured reaches them but the monitor), its inputs end in takes. So it tells JACK
/// its outputs' capture latency and its inputs' playback latency are 0, as a sound card's
/// ports are. That also keeps a loop through Tapedeck (its output into a client whose output
/// comes back in) from feeding JACK's figures back into themselves.
final class JACKLatencyWatch: @unchecked Sendable {
    /// A port's range as JACK has it: `min` and `max` differ where paths of different
    /// latency meet.
    struct Range: Equatable, Sendable {
        var min: Int64
        var max: Int64
    }

    /// What JACK said last, and how many times it spoke.
    struct Table: Sendable {
        var capture: [Range]
        var playback: [Range]
        var generation = 0
    }

    private let inputs: [OpaquePointer]
    private let outputs: [OpaquePointer]
    private let midiInputs: [OpaquePointer]
    private let midiOutputs: [OpaquePointer]
    private let table: Mutex<Table>

    init(inputs: [OpaquePointer], outputs: [OpaquePointer], midiInputs: [OpaquePointer], midiOutputs: [OpaquePointer]) {
        self.inputs = inputs
        self.outputs = outputs
        self.midiInputs = midiInputs
        self.midiOutputs = midiOutputs
        table = Mutex(Table(capture: Array(repeating: Range(min: 0, max: 0), count: inputs.count),
                            playback: Array(repeating: Range(min: 0, max: 0), count: outputs.count)))
    }

    /// JACK's latency callback: sets the client's own figures for `mode` and keeps what JACK
    /// computed for the other side. JACK's notification thread (not the real-time one).
    func update(_ mode: jack_latency_callback_mode_t) {
        var zero = jack_latency_range_t(min: 0, max: 0)
        if mode.rawValue == JackCaptureLatency.rawValue {
            for port in outputs + midiOutputs { jack_port_set_latency_range(port, JackCaptureLatency, &zero) }
            let ranges = Self.ranges(inputs, mode: JackCaptureLatency)
            table.withLock {
                $0.capture = ranges
                $0.generation += 1
            }
        } else {
            for port in inputs + midiInputs { jack_port_set_latency_range(port, JackPlaybackLatency, &zero) }
            let ranges = Self.ranges(outputs, mode: JackPlaybackLatency)
            table.withLock {
                $0.playback = ranges
                $0.generation += 1
            }
        }
    }

    /// Reads both sides from JACK directly (before the first callback). Control thread,
    /// while the client is alive.
    func readNow() {
        let capture = Self.ranges(inputs, mode: JackCaptureLatency)
        let playback = Self.ranges(outputs, mode: JackPlaybackLatency)
        table.withLock {
            $0.capture = capture
            $0.playback = playback
            $0.generation += 1
        }
    }

    /// Something changed in JACK's graph: the figures may follow. Notification thread.
    func graphChanged() { table.withLock { $0.generation += 1 } }

    /// What JACK said last. Any thread but the real-time one.
    var current: Table { table.withLock { $0 } }

    private static func ranges(_ ports: [OpaquePointer], mode: jack_latency_callback_mode_t) -> [Range] {
        ports.map { port in
            var range = jack_latency_range_t()
            jack_port_get_latency_range(port, mode, &range)
            return Range(min: Int64(range.min), max: Int64(range.max))
        }
    }
}

/// JACK's latency and graph callbacks for a ``JACKLatencyWatch`` (its `arg`, unretained).
enum JACKLatencyCallbacks {
    static let latency: JackLatencyCallback = { mode, arg in
        Unmanaged<JACKLatencyWatch>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.update(mode) }
    }
    static let graphOrder: JackGraphOrderCallback = { arg in
        Unmanaged<JACKLatencyWatch>.fromOpaque(arg!)._withUnsafeGuaranteedRef { $0.graphChanged() }
        return 0
    }
}
