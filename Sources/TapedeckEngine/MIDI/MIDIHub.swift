import Synchronization
import TapedeckCore
import TapedeckDSP

/// Everything MIDI the audio thread shares with the other threads, allocated once with the
/// engine: the input ports it drains, the output it feeds (thru), and the queues that carry
/// what it noticed back — machine commands from the device's own MIDI, moved bindings, a
/// learnt controller, played messages for MIDI takes.
final class MIDIHub: @unchecked Sendable {
    /// Most input ports at once.
    static let inputCapacity = 8
    /// Most live messages in one period (more are dropped and counted).
    static let liveCapacity = 512

    /// Unretained ``MIDIInputPort``s (the engine keeps them alive until it closes).
    let inputs: UnsafeMutablePointer<Atomic<UnsafeMutableRawPointer?>>
    /// An unretained ``MIDIOutputPort`` for MIDI thru, or nil.
    let output = Atomic<UnsafeMutableRawPointer?>(nil)
    /// Transport commands found in the device's own MIDI (a backend with MIDI ports).
    let machine = SPSCQueue<MachineCommand>(capacity: 256)
    /// The surface whose buttons count as transport buttons in the device's own MIDI.
    let surface = Atomic<UInt8>(0)
    /// Bound controllers that moved (binding index, value).
    let moves = SPSCQueue<ControllerMoveRecord>(capacity: 2048)
    /// Set by the control thread: the next controller message is learnt, not applied.
    let learning = Atomic<Bool>(false)
    let learned = SPSCQueue<ControllerMoveRecord>(capacity: 16)
    /// Played messages for MIDI takes, while ``capturing``.
    let capture = SPSCQueue<CapturedMIDI>(capacity: 16384)
    let capturing = Atomic<Bool>(false)
    /// Messages lost: a full period, a full capture queue.
    let droppedMessages = Atomic<Int64>(0)

    // Audio thread.
    /// This period's messages from the inputs, in frame order.
    let live: UnsafeMutablePointer<MIDIEvent>
    var liveCount = 0
    /// Messages the device delivered for this period (its own MIDI ports), before routing.
    let delivered: UnsafeMutablePointer<MIDIEvent>
    var deliveredCount = 0
    /// When periods begin, smoothed (see ``CycleClock``), for a device that cannot say.
    var clock = CycleClock()
    /// The device's clock for the period about to render, when it told it (see
    /// ``DevicePeriodTime``); taken, and cleared, as the period gathers its MIDI.
    var devicePeriod: DevicePeriodTime?
    /// ``RenderCore/deviceFrame`` when ``clock`` last ticked (-1: never).
    var clockDeviceFrame: Int64 = -1

    init() {
        inputs = .allocate(capacity: MIDIHub.inputCapacity)
        for i in 0..<MIDIHub.inputCapacity { (inputs + i).initialize(to: Atomic(nil)) }
        let blank = MIDIEvent(frameOffset: 0, status: 0, data1: 0, data2: 0)
        live = .allocate(capacity: MIDIHub.liveCapacity)
        live.initialize(repeating: blank, count: MIDIHub.liveCapacity)
        delivered = .allocate(capacity: MIDIHub.liveCapacity)
        delivered.initialize(repeating: blank, count: MIDIHub.liveCapacity)
    }

    deinit {
        inputs.deinitialize(count: MIDIHub.inputCapacity)
        inputs.deallocate()
        live.deallocate()
        delivered.deallocate()
    }
}

/// A controller and its value, for the queues (binding index or channel in `key`).
struct ControllerMoveRecord: BitwiseCopyable {
    var key: Int32
    var controller: UInt8
    var value: UInt8
}

/// Where the period being rendered takes its live MIDI from: messages stamped in
/// `[startNanoseconds, endNanoseconds)` (CLOCK_MONOTONIC) are placed at the same fraction of
/// the period; earlier ones (late arrivals) at its first frame; later ones wait.
struct MIDIWindow: BitwiseCopyable {
    var startNanoseconds: Int64
    var endNanoseconds: Int64
}

/// When the audio thread's periods begin, for a device that cannot say (see
/// ``DevicePeriodTime``): a delay-locked loop (as JACK keeps its own: F. Adriaensen, "Using
/// a DLL to filter time") follows the period starts the thread sees — its wake-ups, or a
/// device's coarse readings — so messages are placed against a steady grid and keep the
/// spacing they were played with. It is told how much device time passed since the last
/// period (more than a period when an xrun skipped frames), so an xrun is not taken for
/// jitter; a jump it cannot explain (a stall, the first period) starts it afresh.
struct CycleClock {
    /// Filtered start of the previous period and of this one (CLOCK_MONOTONIC ns).
    private(set) var previous: Double = 0
    private(set) var current: Double = 0
    /// Measured nanoseconds per nominal nanosecond of the device's clock.
    private var ratio = 1.0
    private var b = 0.0, c = 0.0

    /// Takes the start of a period seen at `now`, `elapsedNanoseconds` of device time after
    /// the last one began (nominally); `periodNanoseconds` is one period's nominal length.
    ///
    /// Audio thread: arithmetic only.
    mutating func tick(now: Int64, elapsedNanoseconds: Int64, periodNanoseconds: Int64) {
        let t = Double(now)
        let period = Double(max(periodNanoseconds, 1))
        let predicted = current + ratio * Double(elapsedNanoseconds)
        let error = t - predicted
        if current == 0 || abs(error) > 4 * period {
            // Start afresh: a bandwidth of about 1 Hz suits a period of a few milliseconds.
            let omega = 2 * Double.pi * 1.0 * period / 1e9
            b = 2.0.squareRoot() * omega
            c = omega * omega
            ratio = 1
            previous = t - period
            current = t
            return
        }
        let next = predicted + b * error
        // The window runs on from the last one; after skipped frames, it is the last period only.
        previous = elapsedNanoseconds > periodNanoseconds ? next - ratio * period : current
        current = next
        ratio += c * error / period
    }

    /// This period's window, from the filtered starts.
    ///
    /// Audio thread: arithmetic only.
    var window: MIDIWindow {
        MIDIWindow(startNanoseconds: Int64(previous), endNanoseconds: max(Int64(current), Int64(previous) + 1))
    }
}
