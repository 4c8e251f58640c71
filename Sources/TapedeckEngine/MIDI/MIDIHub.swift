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
    /// A Mackie Control surface's faders, V-pots and buttons in the device's own MIDI, for
    /// the control side; and its feedback, sent on the device's MIDI out after the thru.
    let surfaceMessages = SPSCQueue<MackieMessage>(capacity: 1024)
    let surfaceOutput = MIDISurfaceOutput()
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
    /// The last period's window, its first device frame and its length (a message handed
    /// over late is placed in the take through the window it belongs to).
    var lastWindow: MIDIWindow?
    var lastWindowDeviceFrame: Int64 = 0
    var lastWindowFrameCount = 0

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
    /// The timeline frame it was heard from (-1: the transport stood).
    var timelineFrame: Int64 = -1
}

/// Where the period being rendered takes its live MIDI from: messages stamped in
/// `[startNanoseconds, endNanoseconds)` (CLOCK_MONOTONIC) are placed at the same fraction of
/// the period; earlier ones (late arrivals) at its first frame; later ones wait.
public struct MIDIWindow: BitwiseCopyable, Equatable, Sendable {
    public var startNanoseconds: Int64
    public var endNanoseconds: Int64

    /// A window from `startNanoseconds` to `endNanoseconds` (CLOCK_MONOTONIC).
    public init(startNanoseconds: Int64, endNanoseconds: Int64) {
        self.startNanoseconds = startNanoseconds
        self.endNanoseconds = endNanoseconds
    }

    /// The frame of a period of `frameCount` frames that this window maps a moment
    /// `nanoseconds` to, to the nearest frame: negative before the window, `frameCount` or
    /// more after it.
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func frame(atNanoseconds nanoseconds: Int64, frameCount n: Int) -> Int64 {
        let span = max(endNanoseconds - startNanoseconds, 1)
        let twice = 2 * span
        let x = (nanoseconds - startNanoseconds) * Int64(n) * 2 + span
        // Rounded down, not towards zero: a moment before the window is a frame before it.
        return x >= 0 ? x / twice : -((-x + twice - 1) / twice)
    }

    /// Where a message stamped `nanoseconds`, before `window` (this period's, `frameCount`
    /// frames), was played, in frames from the period's first frame: through the window of
    /// the period before (`previous`, `previousFrameCount` frames, which began `framesBefore`
    /// device frames before this one) when the stamp falls in it or earlier; in the time
    /// between the two windows, spread over the device frames between them — those an xrun
    /// lost. With none between them the device's clock stood still (a starved JACK server's
    /// does) after the last window, or before this one: a stamp within a period of the last
    /// window is where that window, run on, puts it (in this period: the device played this
    /// period's frames, then stood still), one later was played while it stood and is at this
    /// period's first frame. With no period before, the window is run back.
    ///
    /// Audio thread: arithmetic only.
    static func playedFrame(atNanoseconds x: Int64, window: MIDIWindow, frameCount n: Int, previous: MIDIWindow?,
                            previousFrameCount: Int, framesBefore: Int64) -> Int64 {
        guard x < window.startNanoseconds, let previous else { return window.frame(atNanoseconds: x, frameCount: n) }
        let runOn = previous.frame(atNanoseconds: x, frameCount: previousFrameCount) - framesBefore
        if x < previous.endNanoseconds { return runOn }
        let gapFrames = framesBefore - Int64(previousFrameCount)
        let gapNanoseconds = window.startNanoseconds - previous.endNanoseconds
        if gapFrames > 0 && gapNanoseconds > 0 {
            return MIDIWindow(startNanoseconds: previous.endNanoseconds, endNanoseconds: window.startNanoseconds)
                .frame(atNanoseconds: x, frameCount: Int(gapFrames)) - gapFrames
        }
        return runOn >= 0 && runOn < Int64(n) ? runOn : 0
    }
}

/// When the audio thread's periods begin, for a device that cannot say (see
/// ``DevicePeriodTime``), from what the thread sees — its wake-ups, or a device's coarse
/// readings — and the device time that passed between them (more than a period when an xrun
/// skipped frames, so an xrun is not taken for lateness), so messages are placed against a
/// steady grid and keep the spacing they were played with.
///
/// A reading is never early, only late by however late the thread woke: each says the
/// device's clock started no later than the reading less the device time counted since, and
/// the earliest of the last ``window`` readings is taken (nominal rate between them). A late
/// wake-up then moves nothing; a device whose clock stood still for a moment (a JACK plugin
/// whose client JACK skipped for a cycle) is followed within ``window`` periods, one that
/// stood still for longer (four periods: a starved JACK server) at once, by starting afresh.
/// (A delay-locked loop did this before: it took a late reading for a phase error and worked
/// it off over a second, overshooting — measured on jacktap under load, after the plugin's
/// client was skipped for a cycle, notes placed up to 305 frames off for a second; after the
/// JACK server stood still 100 ms, its fresh start on one late reading placed them 88 frames
/// early, then 51 late.)
///
/// Public for the JACK MIDI ports, which stamp their messages with it.
public struct CycleClock {
    /// Readings the earliest is taken of.
    static let window = 8
    /// Start of the previous period and of this one (CLOCK_MONOTONIC ns).
    private(set) var previous: Double = 0
    private(set) var current: Double = 0
    /// Nominal device time from the fresh start to this period's start.
    private var deviceTime = 0.0
    /// The last readings less the device time counted at each (a ring).
    private var starts = InlineArray<8, Double>(repeating: 0)
    private var count = 0
    private var next = 0

    /// A clock with no period seen yet.
    public init() {}

    /// Takes the start of a period seen at `now`, `elapsedNanoseconds` of device time after
    /// the last one began (nominally); `periodNanoseconds` is one period's nominal length.
    ///
    /// Audio thread: arithmetic only.
    public mutating func tick(now: Int64, elapsedNanoseconds: Int64, periodNanoseconds: Int64) {
        let t = Double(now)
        let period = Double(max(periodNanoseconds, 1))
        let elapsed = Double(max(elapsedNanoseconds, 0))
        if count == 0 || t - (current + elapsed) > 4 * period {
            // The first period, or the device's clock stood still (or the thread stalled
            // without an xrun): the readings before say nothing about this one.
            deviceTime = 0
            count = 0
            next = 0
            previous = t - period
        } else {
            deviceTime += elapsed
        }
        starts[next] = t - deviceTime
        next = (next + 1) % CycleClock.window
        count = min(count + 1, CycleClock.window)
        var earliest = starts[0]
        for i in 1..<count { earliest = min(earliest, starts[i]) }
        let start = earliest + deviceTime
        if count > 1 {
            // The window runs on from the last one; after skipped frames, it is the last period only.
            previous = elapsedNanoseconds > periodNanoseconds ? start - period : current
        }
        current = start
    }

    /// This period's window, from the filtered starts.
    ///
    /// Audio thread: arithmetic only.
    public var window: MIDIWindow {
        MIDIWindow(startNanoseconds: Int64(previous), endNanoseconds: max(Int64(current), Int64(previous) + 1))
    }
}
