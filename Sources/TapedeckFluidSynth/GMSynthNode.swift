import CFluidSynth
import TapedeckDSP
#if canImport(Glibc)
import Glibc
#endif

/// A General MIDI instrument: FluidSynth playing a SoundFont (`fluid-soundfont-gm` unless the
/// chain names another with `font=`), all sixteen channels, so a MIDI file plays with real
/// sounds — its program changes choose the instruments, channel 10 plays drums.
///
/// Real-time notes (checked in FluidSynth 2.3's source and by ``AudioThreadAllocationTests``):
/// the synth is made with `synth.threadsafe-api = 0` (so its calls take no mutex; only the
/// audio thread touches it once prepared), `synth.cpu-cores = 1` (no render threads),
/// dynamic sample loading off (a program change never reads the SoundFont) and FluidSynth's
/// log functions silenced (a warning would otherwise print from the audio thread). Note-ons
/// take voices from a pool made at creation; `fluid_synth_write_float` renders from buffers
/// made then too. FluidSynth's own reverb and chorus stay off: Debian's build runs them in an
/// OpenMP parallel region, and the OpenMP runtime allocates on the calling thread for every
/// block (the allocation test caught it) — put Tapedeck's `reverb` or `chorus` after `gm`.
/// Events apply on their frame; FluidSynth renders in 64-frame blocks, so a note may sound up
/// to 63 frames after its frame.
public final class GMSynthNode: BuiltInNode, TextParameterNode, @unchecked Sendable {
    /// Registration of `gm`.
    public static let descriptor = NodeDescriptor(
        name: "gm", displayName: "General MIDI (FluidSynth)", kind: .instrument, subtype: "gmfs", tags: ["Instrument", "MIDI"],
        summary: "General MIDI sounds from a SoundFont (FluidSynth): every channel, program changes, drums on channel 10 (add reverb after it).",
        parameters: [
            ParameterDefinition(id: "level", name: "Level", unit: .decibels, minimum: -60, maximum: 12, defaultValue: 0),
            ParameterDefinition(id: "program", name: "Program", unit: .plain, minimum: 0, maximum: 127, defaultValue: 0, decimals: 0),
        ],
        textParameters: [
            TextParameterDefinition(id: "font", name: "SoundFont",
                                    summary: "the .sf2 file (default: the system's General MIDI SoundFont, fluid-soundfont-gm)"),
        ])

    /// Where a General MIDI SoundFont is looked for when the chain names none.
    public static let defaultFontPaths = [
        "/usr/share/sounds/sf2/default-GM.sf2", "/usr/share/sounds/sf2/FluidR3_GM.sf2",
        "/usr/share/soundfonts/default.sf2", "/usr/share/soundfonts/FluidR3_GM.sf2",
    ]

    /// The live parameters.
    public let parameters = NodeParameters(GMSynthNode.descriptor.parameters)
    private var fontPath: String?
    private var fontProblem: String?
    private var settings: OpaquePointer?
    private var synth: OpaquePointer?
    private var left: UnsafeMutablePointer<Float>?
    private var right: UnsafeMutablePointer<Float>?
    private var capacityFrames = 0
    private var appliedProgram = -1
    private var appliedLevel = Double.nan

    /// Creates a synth with no sound yet (it loads its SoundFont in `prepare`).
    public init() {}

    deinit { release() }

    /// Resolves the `font` setting through the host. Control thread, before `prepare`.
    public func setText(_ id: String, _ value: String, files: (any NodeFiles)?) {
        guard id == "font" else { return }
        if value.hasPrefix("/") {
            fontPath = value
        } else if let files {
            switch files.resolve(value) {
            case .success(let path): fontPath = path
            case .failure(let problem): fontProblem = "SoundFont \(value): \(problem.description)"
            }
        } else {
            fontProblem = "SoundFont \(value): this host cannot read files"
        }
    }

    /// Why the synth is silent: no SoundFont, or one FluidSynth could not load.
    public var problem: String? { fontProblem }

    /// Off the audio thread: makes the synth at the format's rate and loads the SoundFont.
    public func prepare(format: NodeFormat, maxFrames: Int) {
        release()
        capacityFrames = max(maxFrames, 1)
        left = .allocate(capacity: capacityFrames)
        right = .allocate(capacity: capacityFrames)
        left?.initialize(repeating: 0, count: capacityFrames)
        right?.initialize(repeating: 0, count: capacityFrames)
        guard fontProblem == nil else { return }
        guard let font = fontPath ?? GMSynthNode.defaultFontPaths.first(where: { access($0, R_OK) == 0 }) else {
            fontProblem = "no General MIDI SoundFont found (install fluid-soundfont-gm, or give gm:font=FILE.sf2)"
            return
        }
        guard access(font, R_OK) == 0 else {
            fontProblem = "SoundFont \(font): \(String(cString: strerror(errno)))"
            return
        }
        if let why = GMSynthNode.loadFluidSynth() {
            fontProblem = "FluidSynth could not be loaded (install libfluidsynth3): \(why)"
            return
        }
        GMSynthNode.silenceLogs()
        guard let s = td_new_fluid_settings() else { fontProblem = "FluidSynth could not make its settings"; return }
        td_fluid_settings_setnum(s, "synth.sample-rate", format.sampleRate)
        td_fluid_settings_setint(s, "synth.threadsafe-api", 0)
        td_fluid_settings_setint(s, "synth.cpu-cores", 1)
        td_fluid_settings_setint(s, "synth.dynamic-sample-loading", 0)
        td_fluid_settings_setint(s, "synth.lock-memory", 0)
        // Off: see the type's notes (OpenMP allocates on the audio thread when they run).
        td_fluid_settings_setint(s, "synth.reverb.active", 0)
        td_fluid_settings_setint(s, "synth.chorus.active", 0)
        settings = s
        guard let made = td_new_fluid_synth(s) else {
            fontProblem = "FluidSynth could not start"
            return
        }
        synth = made
        GMSynthNode.lastError.withMemoryRebound(to: CChar.self, capacity: GMSynthNode.errorCapacity) { $0[0] = 0 }
        if td_fluid_synth_sfload(made, font, 1) == FLUID_FAILED {
            let why = GMSynthNode.takeLastError()
            fontProblem = "SoundFont \(font) could not be loaded\(why.isEmpty ? "" : ": " + why)"
            td_delete_fluid_synth(made)
            synth = nil
            return
        }
        applySettings(force: true)
    }

    /// Applies the level and the program of every melodic channel when they changed. Audio thread (and `prepare`): FluidSynth calls without locks or allocation.
    @inline(__always)
    private func applySettings(force: Bool) {
        guard let synth else { return }
        let level = parameters.value(0)
        if force || level != appliedLevel {
            appliedLevel = level
            // FluidSynth's own default gain is 0.2; 0 dB here is that.
            td_fluid_synth_set_gain(synth, Float(0.2 * pow(10, level / 20)))
        }
        let program = Int(parameters.value(1))
        if force || program != appliedProgram {
            appliedProgram = program
            for channel in 0..<16 where channel != 9 { td_fluid_synth_program_change(synth, Int32(channel), Int32(program)) }
        }
    }

    /// Audio thread: renders the synth between MIDI events, applying each on its frame, and
    /// adds its stereo output to what passes through (mono: both sides averaged).
    public func process(_ context: inout RenderContext) {
        let n = min(context.frameCount, capacityFrames)
        guard let synth, let l = left, let r = right, n > 0 else { return }
        applySettings(force: false)
        let events = context.midiEvents
        var e = 0, frame = 0
        while frame < n {
            while e < events.count && Int(events[e].frameOffset) <= frame {
                send(events[e], to: synth)
                e += 1
            }
            let end = e < events.count ? min(max(Int(events[e].frameOffset), frame + 1), n) : n
            td_fluid_synth_write_float(synth, Int32(end - frame), l + frame, 0, 1, r + frame, 0, 1)
            frame = end
        }
        let channels = context.output.count
        if channels >= 2 {
            for i in 0..<n {
                context.output[0][i] = context.input[0][i] + l[i]
                context.output[1][i] = context.input[1][i] + r[i]
            }
            for c in 2..<channels { for i in 0..<n { context.output[c][i] = context.input[c][i] } }
        } else if channels == 1 {
            for i in 0..<n { context.output[0][i] = context.input[0][i] + (l[i] + r[i]) * 0.5 }
        }
    }

    /// Audio thread: one channel message to FluidSynth.
    @inline(__always)
    private func send(_ event: MIDIEvent, to synth: OpaquePointer) {
        let channel = Int32(event.status & 0x0F)
        let d1 = Int32(event.data1 & 0x7F), d2 = Int32(event.data2 & 0x7F)
        switch event.status & 0xF0 {
        case 0x80: td_fluid_synth_noteoff(synth, channel, d1)
        case 0x90: if d2 == 0 { td_fluid_synth_noteoff(synth, channel, d1) } else { td_fluid_synth_noteon(synth, channel, d1, d2) }
        case 0xA0: td_fluid_synth_key_pressure(synth, channel, d1, d2)
        case 0xB0: td_fluid_synth_cc(synth, channel, d1, d2)
        case 0xC0: td_fluid_synth_program_change(synth, channel, d1)
        case 0xD0: td_fluid_synth_channel_pressure(synth, channel, d1)
        case 0xE0: td_fluid_synth_pitch_bend(synth, channel, d2 << 7 | d1)
        default: break
        }
    }

    /// Audio thread: every voice off at once (a locate, a stop).
    public func reset() {
        guard let synth else { return }
        td_fluid_synth_all_sounds_off(synth, -1)
    }

    /// Off the audio thread: back to a freshly prepared synth (controllers and programs reset,
    /// then this node's program again).
    public func restart() {
        guard let synth else { return }
        td_fluid_synth_system_reset(synth)
        // The warm-up's note (velocity 1) would otherwise ring on, far below hearing but on the meters.
        td_fluid_synth_all_sounds_off(synth, -1)
        applySettings(force: true)
    }

    /// Off the audio thread.
    public func release() {
        if let synth { td_delete_fluid_synth(synth) }
        if let settings { td_delete_fluid_settings(settings) }
        synth = nil
        settings = nil
        left?.deallocate()
        right?.deallocate()
        left = nil
        right = nil
        capacityFrames = 0
    }

    // MARK: - FluidSynth's library and log

    /// Loads libfluidsynth (see `CFluidSynth.h`: not linked, so that the forty libraries it
    /// pulls in cost nothing to the many commands and sessions that never play `gm`). Nil
    /// when loaded, else why not. Any thread; loads once.
    static func loadFluidSynth() -> String? {
        var why = [CChar](repeating: 0, count: 512)
        guard tapedeck_fluid_load(&why, why.count) != 1 else { return nil }
        return String(decoding: why.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static let errorCapacity = 512
    /// The last error FluidSynth logged (a fixed buffer: the log may be called from the audio thread).
    nonisolated(unsafe) private static let lastError = UnsafeMutableRawPointer.allocate(byteCount: errorCapacity, alignment: 1)

    /// Silences FluidSynth's warnings and debug output (they would print from the audio
    /// thread and over the screen) and keeps its errors for ``problem``. Any thread; idempotent.
    static func silenceLogs() {
        let keep: fluid_log_function_t = { _, message, _ in
            guard let message else { return }
            let out = GMSynthNode.lastError.assumingMemoryBound(to: CChar.self)
            var i = 0
            while i < GMSynthNode.errorCapacity - 1 && message[i] != 0 { out[i] = message[i]; i += 1 }
            out[i] = 0
        }
        td_fluid_set_log_function(Int32(FLUID_PANIC.rawValue), keep, nil)
        td_fluid_set_log_function(Int32(FLUID_ERR.rawValue), keep, nil)
        td_fluid_set_log_function(Int32(FLUID_WARN.rawValue), nil, nil)
        td_fluid_set_log_function(Int32(FLUID_INFO.rawValue), nil, nil)
        td_fluid_set_log_function(Int32(FLUID_DBG.rawValue), nil, nil)
    }

    private static func takeLastError() -> String {
        let text = String(cString: lastError.assumingMemoryBound(to: CChar.self))
        lastError.assumingMemoryBound(to: CChar.self)[0] = 0
        return text
    }
}
