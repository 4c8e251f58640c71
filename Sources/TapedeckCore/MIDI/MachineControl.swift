/// MIDI Machine Control and control-surface transport buttons, read into transport commands.
///
/// MMC (MIDI 1.0 RP-013) comes as SysEx: `F0 7F <device> 06 <command> … F7`. Control
/// surfaces send their transport buttons as notes (Mackie Control: play is note 94 on channel
/// 1) or as controllers (Korg nanoKONTROL2 and similar in their default mode: play is CC 41).
/// Decoding allocates nothing, so a MIDI thread or an audio callback may call it.

/// A transport request from MIDI.
public enum MachineCommand: Equatable, Sendable, BitwiseCopyable {
    /// Roll from where the playhead is (MMC play and deferred play).
    case play
    /// Stop rolling (and recording).
    case stop
    /// Record: start a pass on the armed tracks (while rolling: punch in at once).
    case recordStrobe
    /// Leave recording, rolling on.
    case recordExit
    /// Pause: stop where it is.
    case pause
    /// Move back (one bar per press).
    case rewind
    /// Move on (one bar per press).
    case fastForward
    /// Loop (cycle) on or off.
    case toggleLoop
    /// Move the playhead to this time, in microseconds from the session start (MMC locate).
    case locate(microseconds: Int64)
}

/// Which control-surface buttons are transport buttons besides MMC.
public enum ControlSurface: String, Sendable, CaseIterable, Equatable {
    /// MMC only: every note and controller is music (or MIDI learn).
    case off
    /// Mackie Control: notes 91 rewind, 92 forward, 93 stop, 94 play, 95 record, 86 cycle
    /// on channel 1, acted on when pressed (velocity > 0).
    case mackie
    /// Generic controllers (the nanoKONTROL2's defaults): CC 41 play, 42 stop, 43 rewind,
    /// 44 forward, 45 record, 46 cycle on any channel, acted on when pressed (value ≥ 64).
    case cc
    /// A whole Mackie Control surface (the screen's faders, V-pots, buttons and displays, with
    /// feedback; MackieControl.swift): its transport buttons as ``mackie``, and every other
    /// message it sends (notes on channel 1, pitch-bend on channels 1–9, CC 16–23) is the
    /// surface's, never music. Its port should carry nothing else.
    case mcu

    /// A small number for an atomic (0 off, 1 mackie, 2 cc, 3 mcu).
    public var code: UInt8 {
        switch self {
        case .off: 0
        case .mackie: 1
        case .cc: 2
        case .mcu: 3
        }
    }

    /// The surface with that ``code`` (off for any other). No allocation: audio threads use it.
    public init(code: UInt8) {
        switch code {
        case 1: self = .mackie
        case 2: self = .cc
        case 3: self = .mcu
        default: self = .off
        }
    }
}

/// Reads MMC SysEx and surface buttons. A value type the MIDI source keeps.
public struct MachineControlDecoder: Sendable, Equatable {
    /// The surface whose buttons are transport buttons.
    public var surface: ControlSurface
    /// The MMC device id answered (0x7F: every message, whatever its id).
    public var deviceID: UInt8

    /// A decoder for `surface`, answering every MMC device id.
    public init(surface: ControlSurface = .off, deviceID: UInt8 = 0x7F) {
        self.surface = surface
        self.deviceID = deviceID
    }

    /// The command in an MMC SysEx message (`bytes` from `F0` to `F7`), or nil.
    public func command(sysex bytes: UnsafeBufferPointer<UInt8>) -> MachineCommand? {
        guard bytes.count >= 6, bytes[0] == 0xF0, bytes[1] == 0x7F, bytes[3] == 0x06 else { return nil }
        guard deviceID == 0x7F || bytes[2] == 0x7F || bytes[2] == deviceID else { return nil }
        switch bytes[4] {
        case 0x01: return .stop
        case 0x02, 0x03: return .play
        case 0x04: return .fastForward
        case 0x05: return .rewind
        case 0x06: return .recordStrobe
        case 0x07: return .recordExit
        case 0x08, 0x09: return .pause
        case 0x44:
            // LOCATE TARGET: 44 06 01 hr mn sc fr sf (hr's bits 5-6 give the frame rate).
            guard bytes.count >= 13, bytes[5] == 0x06, bytes[6] == 0x01 else { return nil }
            let hr = bytes[7]
            let fps: Double
            switch (hr >> 5) & 0x03 {
            case 0: fps = 24
            case 1: fps = 25
            case 2: fps = 29.97
            default: fps = 30
            }
            let hours = Double(hr & 0x1F), minutes = Double(bytes[8] & 0x7F), seconds = Double(bytes[9] & 0x7F)
            let frames = Double(bytes[10] & 0x1F), subframes = Double(bytes[11] & 0x7F)
            let total = hours * 3600 + minutes * 60 + seconds + (frames + subframes / 100) / fps
            return .locate(microseconds: Int64((total * 1_000_000).rounded()))
        default:
            return nil
        }
    }

    /// The command an array of bytes holds (see ``command(sysex:)``).
    public func command(sysex bytes: [UInt8]) -> MachineCommand? {
        bytes.withUnsafeBufferPointer { command(sysex: $0) }
    }

    /// Whether a channel message is one of the surface's transport buttons (pressed or
    /// released: either way it is no note and no controller for anything else), and the
    /// command when it is a press.
    public func button(status: UInt8, data1: UInt8, data2: UInt8) -> (isButton: Bool, command: MachineCommand?) {
        switch surface {
        case .off:
            return (false, nil)
        case .mackie, .mcu:
            let kind = status & 0xF0
            guard status & 0x0F == 0, kind == 0x90 || kind == 0x80 else { return (false, nil) }
            let command: MachineCommand
            switch data1 {
            case 91: command = .rewind
            case 92: command = .fastForward
            case 93: command = .stop
            case 94: command = .play
            case 95: command = .recordStrobe
            case 86: command = .toggleLoop
            default: return (false, nil)
            }
            return (true, kind == 0x90 && data2 > 0 ? command : nil)
        case .cc:
            guard status & 0xF0 == 0xB0 else { return (false, nil) }
            let command: MachineCommand
            switch data1 {
            case 41: command = .play
            case 42: command = .stop
            case 43: command = .rewind
            case 44: command = .fastForward
            case 45: command = .recordStrobe
            case 46: command = .toggleLoop
            default: return (false, nil)
            }
            return (true, data2 >= 64 ? command : nil)
        }
    }
}
