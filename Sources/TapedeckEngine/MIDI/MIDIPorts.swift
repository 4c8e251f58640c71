import Synchronization
import TapedeckCore
import TapedeckDSP

/// A channel message stamped with when it arrived (CLOCK_MONOTONIC nanoseconds, the clock of
/// ``monotonicNanoseconds()``). Public because a MIDI output's backend (TapedeckDevices'
/// JACK MIDI ports) reads them from ``MIDIOutputPort/messages``; any thread may hold one.
public struct TimedMIDIMessage: BitwiseCopyable {
    /// When it arrived, or is due to be sent (CLOCK_MONOTONIC nanoseconds).
    public var nanoseconds: Int64
    /// The status byte.
    public var status: UInt8
    /// The first data byte (0 when the message has none).
    public var data1: UInt8
    /// The second data byte (0 when the message has none).
    public var data2: UInt8
}

/// Where a MIDI source (the ALSA sequencer's thread, a JACK MIDI port, a test) hands the
/// engine what it receives: channel messages on a preallocated lock-free ring that the audio
/// thread drains into each period at the frame they arrived, and transport commands (MMC,
/// surface buttons) on another ring the control thread drains (``Engine/drainMachineCommands()``).
///
/// One producer thread per port: each source owns its own port.
public final class MIDIInputPort: @unchecked Sendable {
    /// Who feeds it, for messages (`ALSA 20:0 Keystation`, `JACK tapedeck:midi_in`).
    public let name: String
    let messages = SPSCQueue<TimedMIDIMessage>(capacity: 4096)
    let machine = SPSCQueue<MachineCommand>(capacity: 256)
    /// A Mackie Control surface's faders, V-pots and buttons (``ControlSurface/mackie``), for
    /// the control side (``drainSurface()``); never the audio thread's.
    let surfaceMessages = SPSCQueue<MackieMessage>(capacity: 1024)
    /// Messages lost to a full ring (the engine not draining: no device running).
    let droppedCount = Atomic<Int>(0)
    private let decoder: MachineControlDecoder

    /// A port whose source's transport buttons are those of `surface` (MMC always counts).
    /// Control thread.
    public init(name: String, surface: ControlSurface = .off) {
        self.name = name
        decoder = MachineControlDecoder(surface: surface)
    }

    /// Takes one complete MIDI message (a channel message, or SysEx from `F0` to `F7`) that
    /// arrived at `nanoseconds`: MMC and surface buttons become transport commands, channel
    /// messages go to the audio thread, anything else is dropped.
    ///
    /// The source's thread (a JACK process callback included): no allocation, no locks.
    public func receive(_ bytes: UnsafeBufferPointer<UInt8>, atNanoseconds nanoseconds: Int64) {
        // (Indexed: Collection's generic `first` allocates in a debug build.)
        guard bytes.count > 0 else { return }
        let status = bytes[0]
        if status == 0xF0 {
            // A Mackie or Logic Control's handshake is the surface's, for the control side.
            if decoder.surface == .mcu, let m = MackieControl.decode(sysex: bytes) {
                _ = surfaceMessages.push(m)
                EngineActivity.shared.signal()
                return
            }
            if let command = decoder.command(sysex: bytes) { _ = machine.push(command); EngineActivity.shared.signal() }
            return
        }
        guard status >= 0x80 && status < 0xF0 else { return }
        let d1 = bytes.count > 1 ? bytes[1] & 0x7F : 0
        let d2 = bytes.count > 2 ? bytes[2] & 0x7F : 0
        let button = decoder.button(status: status, data1: d1, data2: d2)
        if button.isButton {
            if let command = button.command { _ = machine.push(command); EngineActivity.shared.signal() }
            return
        }
        if decoder.surface == .mcu, let m = MackieControl.decode(status: status, data1: d1, data2: d2) {
            // A full ring (nothing draining it) drops the move: the surface sends the next.
            _ = surfaceMessages.push(m)
            EngineActivity.shared.signal()
            return
        }
        if !messages.push(TimedMIDIMessage(nanoseconds: nanoseconds, status: status, data1: d1, data2: d2)) {
            droppedCount.add(1, ordering: .relaxed)
        }
    }

    /// A channel message that arrived at `nanoseconds` (see ``receive(_:atNanoseconds:)``).
    /// The source's thread.
    public func receive(status: UInt8, data1: UInt8, data2: UInt8 = 0, atNanoseconds nanoseconds: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 3) { b in
            b[0] = status; b[1] = data1; b[2] = data2
            receive(UnsafeBufferPointer(start: b.baseAddress, count: 1 + MIDISequence.dataBytes(status: status)), atNanoseconds: nanoseconds)
        }
    }

    /// What a Mackie Control surface did since the last call, in order. The one control-side
    /// thread that serves the surface (the screen's).
    public func drainSurface() -> [MackieMessage] {
        var out: [MackieMessage] = []
        while let m = surfaceMessages.pop() { out.append(m) }
        return out
    }

    /// Now, on the clock the stamps use. Any thread.
    public static func now() -> Int64 { monotonicNanoseconds() }
}

/// Where the engine puts MIDI to send on (MIDI thru): the audio thread writes what an armed
/// track hears from the inputs; the output's own thread (a JACK process callback) takes it
/// out and sends it, each message at the time it was heard.
public final class MIDIOutputPort: @unchecked Sendable {
    /// Where it goes, for messages.
    public let name: String
    /// What to send, in order, each with the time it is due. The audio thread pushes; the
    /// output's own thread (a JACK process callback, in TapedeckDevices) peeks and pops, and
    /// is the only one that may.
    public let messages = SPSCQueue<TimedMIDIMessage>(capacity: 4096)

    /// A port. Control thread.
    public init(name: String) { self.name = name }

    /// The next message to send, with the time it is due (CLOCK_MONOTONIC nanoseconds).
    /// The output's thread: no allocation, no locks.
    public func next() -> (nanoseconds: Int64, status: UInt8, data1: UInt8, data2: UInt8)? {
        guard let m = messages.pop() else { return nil }
        return (m.nanoseconds, m.status, m.data1, m.data2)
    }
}

/// A transport command from MIDI, as the control thread receives it.
public struct MachineRequest: Sendable, Equatable {
    /// What was asked.
    public var command: MachineCommand
    /// The port it came from.
    public var port: String

    public init(command: MachineCommand, port: String) {
        self.command = command
        self.port = port
    }
}

/// A controller learnt (MIDI learn): the next controller message that arrived while learning.
public struct LearnedController: Sendable, Equatable {
    /// Channel 0…15.
    public var channel: Int
    /// Controller number.
    public var controller: Int
    /// Its value.
    public var value: Int
}

/// A bound controller moved what it is bound to; the front-end follows in its session.
public struct ControllerMove: Sendable, Equatable {
    /// Index of the binding in ``GraphSpec/midiBindings`` (the session's `midiBindings`).
    public var binding: Int
    /// The controller's value, 0…127.
    public var value: Int
    /// The timeline frame the move was heard from (the first of the period that applied it),
    /// -1 when the transport stood.
    public var timelineFrame: Int64

    /// A move of binding `binding` to `value`, heard from `timelineFrame`.
    public init(binding: Int, value: Int, timelineFrame: Int64 = -1) {
        self.binding = binding
        self.value = value
        self.timelineFrame = timelineFrame
    }
}

/// A captured message for MIDI takes: when it was played, in device frames (the frame heard
/// when it was played), and the message.
struct CapturedMIDI: BitwiseCopyable {
    var playedDeviceFrame: Int64
    var status: UInt8
    var data1: UInt8
    var data2: UInt8
}
