import Synchronization
import TapedeckCore

/// Parameter definitions, note values, and the atomic store a node reads once per block.

/// The unit a parameter is measured in; it decides which suffixes chain text accepts.
public enum ParameterUnit: String, Sendable {
    /// Decibels (`-6db`).
    case decibels = "dB"
    /// Hertz (`80hz`, `2khz`).
    case hertz = "Hz"
    /// Milliseconds (`250ms`, `1.5s`).
    case milliseconds = "ms"
    /// A fraction 0…1 (`0.3`, `30%`).
    case fraction = ""
    /// A compression ratio (`4` means 4:1).
    case ratio = ":1"
    /// Semitones (`-12st`).
    case semitones = "st"
    /// A MIDI note number.
    case midiNote = "note"
    /// One of a list of named choices (`wave=saw`).
    case choice = "choice"
    /// Stereo position, -1 left … +1 right.
    case pan = "L/R"
    /// Filter quality factor.
    case q = "Q"
    /// Seconds (`2s`, `500ms`).
    case seconds = "s"
    /// Percent, 0…100 (`30%`).
    case percent = "%"
    /// Frames (samples of one channel).
    case frames = "frames"
    /// Tempo in beats per minute.
    case beatsPerMinute = "BPM"
    /// Hundredths of a semitone.
    case cents = "cents"
    /// A number in no unit Tapedeck knows (many plugin controls); no suffix is accepted.
    case plain = "number"

    /// What follows a value when it is shown (`dB`, `Hz`); empty for unitless values.
    public var symbol: String {
        switch self {
        case .plain, .fraction: return ""
        default: return rawValue
        }
    }
}

/// A value with a name of its own (an LV2 scale point such as `0 = Low-pass`).
public struct ValueLabel: Sendable, Equatable {
    /// The value, in the parameter's unit.
    public var value: Double
    /// Its name.
    public var label: String

    /// Creates a named value.
    public init(value: Double, label: String) {
        self.value = value
        self.label = label
    }
}

/// One parameter of a node type.
/// How a parameter's range lies along a control's travel (an LV2 port's properties).
public enum ParameterTravel: Equatable, Sendable {
    /// Evenly.
    case linear
    /// On a logarithmic scale (`pprops:logarithmic`; bounds of one sign).
    case logarithmic
    /// In whole steps, each an equal share of the travel (`lv2:integer`).
    case integer
    /// Off below half-way, on from it (`lv2:toggled`).
    case toggle
}

public struct ParameterDefinition: Sendable, Equatable {
    /// Identifier used in chain text (`cutoff`).
    public var id: String
    /// Human name (`Cutoff frequency`).
    public var name: String
    /// Unit of the stored value.
    public var unit: ParameterUnit
    /// Smallest allowed value.
    public var minimum: Double
    /// Largest allowed value.
    public var maximum: Double
    /// Value of a new node.
    public var defaultValue: Double
    /// Decimals shown by ``displayText(_:)``.
    public var decimals: Int
    /// Names of the choices for `.choice` parameters (value = index).
    public var choices: [String]
    /// Whether a note value (`1/8`, `1/4.`, `1/8t`) may set it, following the host's tempo.
    /// For milliseconds the note value is a length; for hertz it is one cycle's length.
    public var tempoSyncable: Bool
    /// Values with names of their own, shown beside the range (not choices: any value in the
    /// range may be set).
    public var valueLabels: [ValueLabel]
    /// How the range lies along a control's travel, as an LV2 port declares it (what a control
    /// surface's 0…1 means, as Ardour maps it). Built-in nodes: linear.
    public var travel: ParameterTravel = .linear
    /// Evenly spaced stops along the travel (LV2 `pprops:rangeSteps`); below 2: none.
    public var rangeSteps = 0

    /// Creates a definition.
    public init(id: String, name: String, unit: ParameterUnit, minimum: Double, maximum: Double,
                defaultValue: Double, decimals: Int = 1, choices: [String] = [], tempoSyncable: Bool = false,
                valueLabels: [ValueLabel] = []) {
        self.id = id
        self.name = name
        self.unit = unit
        self.minimum = minimum
        self.maximum = maximum
        self.defaultValue = defaultValue
        self.decimals = decimals
        self.choices = choices
        self.tempoSyncable = tempoSyncable
        self.valueLabels = valueLabels
    }

    /// Creates a `.choice` parameter over `choices`.
    public static func choice(id: String, name: String, choices: [String], defaultIndex: Int = 0) -> ParameterDefinition {
        ParameterDefinition(id: id, name: name, unit: .choice, minimum: 0, maximum: Double(choices.count - 1),
                            defaultValue: Double(defaultIndex), decimals: 0, choices: choices)
    }

    /// `value` clamped into the range (choices rounded to a whole index).
    public func clamped(_ value: Double) -> Double {
        let v = value.isNaN ? defaultValue : min(max(value, minimum), maximum)
        return unit == .choice ? v.rounded() : v
    }

    /// The value as a user reads it: `-18.0 dB`, `80 Hz`, `saw`.
    public func displayText(_ value: Double) -> String {
        if unit == .choice {
            let i = Int(value.rounded())
            return choices.indices.contains(i) ? choices[i] : String(i)
        }
        let number = formatFixed(value, decimals: decimals)
        switch unit {
        case .fraction, .midiNote, .plain: return number
        case .ratio: return "\(number):1"
        default: return "\(number) \(unit.rawValue)"
        }
    }
}

/// A musical length such as `1/8`, `1/4.` (dotted) or `1/8t` (triplet).
public struct NoteValue: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// How a note is lengthened or shortened.
    public enum Modifier: String, Sendable {
        /// Plain.
        case none = ""
        /// One and a half times as long.
        case dotted = "."
        /// Two thirds as long.
        case triplet = "t"
    }
    /// Numerator of the fraction of a whole note.
    public var numerator: Int
    /// Denominator of the fraction of a whole note.
    public var denominator: Int
    /// Dotted, triplet or plain.
    public var modifier: Modifier

    /// Creates a note value.
    public init(numerator: Int = 1, denominator: Int, modifier: Modifier = .none) {
        self.numerator = numerator
        self.denominator = denominator
        self.modifier = modifier
    }

    /// Length in whole notes (`1/8` = 0.125, `1/4.` = 0.375).
    public var wholeNotes: Double {
        let base = Double(numerator) / Double(denominator)
        switch modifier {
        case .none: return base
        case .dotted: return base * 1.5
        case .triplet: return base * 2 / 3
        }
    }

    /// Chain text: `1/8`, `1/4.`, `1/8t`.
    public var description: String { "\(numerator)/\(denominator)\(modifier.rawValue)" }
}

/// A parameter setting as written in chain text: a number, or a note value for synced ones.
public enum ParameterValue: Equatable, Hashable, Sendable {
    /// A number in the parameter's unit (choices are their index).
    case number(Double)
    /// A tempo-synced note value.
    case note(NoteValue)
}

/// A node's live parameter values, safe to set from any thread.
///
/// Each value is an `Atomic<UInt64>` holding a `Double`'s bit pattern, with a second atomic
/// per parameter for the note value it follows (0 = not synced). Nodes read each value once
/// per block with relaxed loads: a knob turn needs no ordering with anything else, only
/// freedom from torn reads.
public final class NodeParameters: @unchecked Sendable {
    /// The definitions, in declaration order.
    public let definitions: [ParameterDefinition]
    /// (Usable from inlined code: automation's reads and writes are compiled into the engine.)
    @usableFromInline let values: UnsafeMutablePointer<Atomic<UInt64>>
    @usableFromInline let syncWholeNotes: UnsafeMutablePointer<Atomic<UInt64>>
    /// Each parameter's range and default, and whether it takes whole numbers, flat: what
    /// clamping needs, read on the audio thread without copying a definition (whose strings
    /// would be retained and released every time).
    private let ranges: UnsafeMutablePointer<(minimum: Double, maximum: Double, fallback: Double, whole: Bool)>

    /// Creates the store with every parameter at its default.
    public init(_ definitions: [ParameterDefinition]) {
        self.definitions = definitions
        let n = max(definitions.count, 1)
        values = .allocate(capacity: n)
        syncWholeNotes = .allocate(capacity: n)
        ranges = .allocate(capacity: n)
        for i in 0..<n {
            let d = i < definitions.count ? definitions[i] : nil
            (ranges + i).initialize(to: (d?.minimum ?? 0, d?.maximum ?? 0, d?.defaultValue ?? 0, d?.unit == .choice))
        }
        for i in 0..<n {
            let v = i < definitions.count ? definitions[i].defaultValue : 0
            (values + i).initialize(to: Atomic(v.bitPattern))
            (syncWholeNotes + i).initialize(to: Atomic(Double(0).bitPattern))
        }
    }

    deinit {
        let n = max(definitions.count, 1)
        values.deinitialize(count: n)
        values.deallocate()
        syncWholeNotes.deinitialize(count: n)
        syncWholeNotes.deallocate()
        ranges.deallocate()
    }

    /// Index of the parameter called `id`, if there is one.
    public func index(of id: String) -> Int? { definitions.firstIndex { $0.id == id } }

    /// Parameters (the first 64) a hand holds while automation is written: their lanes rest
    /// and the value set by hand (a controller) is heard.
    @usableFromInline let touchedBits = Atomic<UInt64>(0)
    /// A controller took hold of parameter `index`. Any thread, the audio thread included.
    @inline(__always) public func touch(_ index: Int) {
        if index >= 0 && index < 64 { touchedBits.bitwiseOr(1 << UInt64(index), ordering: .relaxed) }
    }
    /// The hand let go of parameter `index`: its lane plays again. Any thread.
    public func release(_ index: Int) {
        if index >= 0 && index < 64 { touchedBits.bitwiseAnd(~(1 << UInt64(index)), ordering: .relaxed) }
    }
    /// Every parameter let go. Any thread.
    public func releaseAll() { touchedBits.store(0, ordering: .relaxed) }
    /// Whether parameter `index` is held. Audio thread: one relaxed load.
    @inlinable @inline(__always) public func isTouched(_ index: Int) -> Bool {
        index >= 0 && index < 64 && touchedBits.load(ordering: .relaxed) & (1 << UInt64(index)) != 0
    }

    /// Sets parameter `index` to `value`, clamped into its range (as
    /// ``ParameterDefinition/clamped(_:)``); stops following the tempo. Any thread, the audio
    /// thread included (loads and stores only).
    public func set(_ index: Int, _ value: Double) {
        guard index >= 0 && index < definitions.count else { return }
        let r = ranges[index]
        let v = value.isNaN ? r.fallback : min(max(value, r.minimum), r.maximum)
        syncWholeNotes[index].store(Double(0).bitPattern, ordering: .relaxed)
        values[index].store((r.whole ? v.rounded() : v).bitPattern, ordering: .relaxed)
    }

    /// Sets parameter `index` to `value`, which the caller has clamped into its range (see
    /// ``range(_:)``; a whole number where the parameter takes one), and stops a parameter
    /// that can follow the tempo from following it. For automation, which keeps each lane's
    /// range beside it: setting a value every 32 frames through ``set(_:_:)-(Int,Double)``
    /// read the definitions, the ranges and the tempo table, three more cache lines a strip.
    /// Audio thread: one or two relaxed stores.
    @inlinable @inline(__always)
    public func setInRange(_ index: Int, _ value: Double, tempoSyncable: Bool) {
        if tempoSyncable { syncWholeNotes[index].store(Double(0).bitPattern, ordering: .relaxed) }
        values[index].store(value.bitPattern, ordering: .relaxed)
    }

    /// Parameter `index`'s range, the value a NaN becomes, and whether it takes whole numbers.
    public func range(_ index: Int) -> (minimum: Double, maximum: Double, fallback: Double, whole: Bool) { ranges[index] }

    /// Sets the parameter called `id`; returns false when there is none. Any thread.
    @discardableResult
    public func set(_ id: String, _ value: Double) -> Bool {
        guard let i = index(of: id) else { return false }
        set(i, value)
        return true
    }

    /// Makes a tempo-syncable parameter follow `note`. Any thread.
    public func set(_ index: Int, note: NoteValue) {
        guard definitions.indices.contains(index), definitions[index].tempoSyncable else { return }
        syncWholeNotes[index].store(note.wholeNotes.bitPattern, ordering: .relaxed)
    }

    /// Applies a chain-text value. Any thread.
    public func set(_ index: Int, _ value: ParameterValue) {
        switch value {
        case .number(let v): set(index, v)
        case .note(let n): set(index, note: n)
        }
    }

    /// Current value of parameter `index` (its number, even when a note value overrides it).
    /// Audio thread: one relaxed atomic load.
    @inline(__always)
    public func value(_ index: Int) -> Double {
        Double(bitPattern: values[index].load(ordering: .relaxed))
    }

    /// Whole notes the parameter follows, or 0 when it is not tempo-synced.
    /// Audio thread: one relaxed atomic load.
    @inline(__always)
    public func syncedWholeNotes(_ index: Int) -> Double {
        Double(bitPattern: syncWholeNotes[index].load(ordering: .relaxed))
    }

    /// A milliseconds parameter resolved against the tempo (a note value becomes its length).
    /// Audio thread: safe.
    @inline(__always)
    public func milliseconds(_ index: Int, transport: TransportInfo) -> Double {
        let whole = syncedWholeNotes(index)
        return whole > 0 ? transport.milliseconds(wholeNotes: whole) : value(index)
    }

    /// A hertz parameter resolved against the tempo (a note value is one cycle's length).
    /// Audio thread: safe.
    @inline(__always)
    public func hertz(_ index: Int, transport: TransportInfo) -> Double {
        let whole = syncedWholeNotes(index)
        return whole > 0 ? 1000 / max(transport.milliseconds(wholeNotes: whole), 0.001) : value(index)
    }
}

/// `value` with exactly `decimals` decimals, without Foundation.
func formatFixed(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
    var scale = 1.0
    for _ in 0..<max(decimals, 0) { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int64(scaled / scale)
    let fraction = Int64(scaled - Double(whole) * scale)
    let sign = value < 0 && scaled != 0 ? "-" : ""
    if decimals <= 0 { return "\(sign)\(whole)" }
    var f = String(fraction)
    while f.count < decimals { f = "0" + f }
    return "\(sign)\(whole).\(f)"
}

/// The shortest text that reads back as `value` (`80`, `-18`, `0.3`).
func formatShortest(_ value: Double) -> String {
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return "\(value)"
}

extension ParameterDefinition {
    /// How a MIDI controller sweeps this parameter: a frequency spanning more than a decade
    /// logarithmically, a choice by steps, anything else linearly.
    public var controllerSweep: (logarithmic: Bool, steps: Int?) {
        (unit == .hertz && minimum > 0 && maximum / minimum > 10, unit == .choice ? choices.count : nil)
    }

    /// The value a controller at `controllerValue` (0…127) sets (see ``controllerSweep``).
    public func value(controllerValue: Int) -> Double {
        let sweep = controllerSweep
        return MIDIBinding.parameterValue(controllerValue: controllerValue, minimum: minimum, maximum: maximum,
                                          logarithmic: sweep.logarithmic, steps: sweep.steps)
    }
}
