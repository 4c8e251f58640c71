import TapedeckCore
#if canImport(Glibc)
import Glibc
#endif

/// A Standard MIDI File (format 0 or 1), read and written by Tapedeck itself.
///
/// Why here and not a library: of the libraries Tapedeck uses, only FluidSynth reads MIDI
/// files, and only to play them through its own player (`fluid_player_add` and a playback
/// callback driven by its synth clock); it has no API to read a file's events or to write
/// one. libasound has none either. The format is small: chunks, variable-length numbers,
/// running status, meta and SysEx events — read defensively (every length checked, every
/// count limited), so a damaged file is one line naming the byte, never a trap.
public struct StandardMIDIFile: Equatable, Sendable {
    /// One event of a track, in ticks.
    public struct Event: Equatable, Sendable {
        /// Ticks from the track's start.
        public var tick: Int64
        /// Status byte of a channel message.
        public var status: UInt8
        /// First data byte.
        public var data1: UInt8
        /// Second data byte (0 for one-byte messages).
        public var data2: UInt8

        /// Creates an event.
        public init(tick: Int64, status: UInt8, data1: UInt8, data2: UInt8 = 0) {
            self.tick = tick
            self.status = status
            self.data1 = data1
            self.data2 = data2
        }
    }

    /// One `MTrk` chunk: its channel messages and SysEx (meta events other than those kept
    /// below are dropped).
    public struct Track: Equatable, Sendable {
        /// The track-name meta event, if any.
        public var name: String?
        /// Channel messages in order.
        public var events: [Event]
        /// SysEx events in order.
        public var sysEx: [SysEx]
        /// Tick of the end-of-track event.
        public var endTick: Int64

        /// Creates a track.
        public init(name: String? = nil, events: [Event] = [], sysEx: [SysEx] = [], endTick: Int64 = 0) {
            self.name = name
            self.events = events
            self.sysEx = sysEx
            self.endTick = max(endTick, events.last?.tick ?? 0, sysEx.last?.tick ?? 0)
        }

        /// Whether the track holds anything a session keeps (channel messages or SysEx).
        public var hasContent: Bool { !events.isEmpty || !sysEx.isEmpty }
    }

    /// A tempo change: from `tick` on, a quarter note lasts `microsecondsPerQuarter`.
    public struct Tempo: Equatable, Sendable {
        /// Where it takes effect.
        public var tick: Int64
        /// Microseconds per quarter note (500000 is 120 BPM).
        public var microsecondsPerQuarter: Int

        /// Creates a tempo change.
        public init(tick: Int64, microsecondsPerQuarter: Int) {
            self.tick = tick
            self.microsecondsPerQuarter = microsecondsPerQuarter
        }
    }

    /// 0 (one track) or 1 (several, played together).
    public var format: Int
    /// Ticks per quarter note (PPQ).
    public var ticksPerQuarter: Int
    /// For SMPTE time division: ticks per second (frames per second × ticks per frame); 0
    /// when the division is in ticks per quarter.
    public var ticksPerSecond: Int
    /// The tracks.
    public var tracks: [Track]
    /// Tempo changes from every track, in tick order (none: 120 BPM).
    public var tempos: [Tempo]
    /// The first time signature (numerator, denominator), if the file has one.
    public var timeSignature: TimeSignature?
    /// Time signatures after the first, in tick order (a meter change).
    public var laterTimeSignatures: [MeterAtTick] = []

    /// A time signature from `tick` on.
    public struct MeterAtTick: Equatable, Sendable {
        /// Where it takes effect.
        public var tick: Int64
        /// The meter.
        public var signature: TimeSignature

        /// Creates a meter change.
        public init(tick: Int64, signature: TimeSignature) {
            self.tick = tick
            self.signature = signature
        }
    }

    /// Creates a file.
    public init(format: Int = 1, ticksPerQuarter: Int = 960, tracks: [Track] = [], tempos: [Tempo] = [],
                timeSignature: TimeSignature? = nil) {
        self.format = format
        self.ticksPerQuarter = ticksPerQuarter
        self.ticksPerSecond = 0
        self.tracks = tracks
        self.tempos = tempos
        self.timeSignature = timeSignature
    }

    /// Largest file read: a session's MIDI is far smaller.
    public static let maximumFileBytes: Int64 = 64 << 20

    // MARK: - Time

    /// Seconds from the start at `tick`, through the tempo changes.
    public func seconds(atTick tick: Int64) -> Double {
        if ticksPerSecond > 0 { return Double(tick) / Double(ticksPerSecond) }
        var seconds = 0.0, lastTick: Int64 = 0, perQuarter = 500_000.0
        for t in tempos where t.tick < tick {
            seconds += Double(t.tick - lastTick) * perQuarter / 1e6 / Double(ticksPerQuarter)
            lastTick = t.tick
            perQuarter = Double(t.microsecondsPerQuarter)
        }
        return seconds + Double(tick - lastTick) * perQuarter / 1e6 / Double(ticksPerQuarter)
    }

    /// ``seconds(atTick:)`` for ticks asked in rising order: the same sums in the same order,
    /// walking the tempo changes once for all of them.
    private struct TickClock {
        let file: StandardMIDIFile
        private var next = 0, seconds = 0.0, lastTick: Int64 = 0, perQuarter = 500_000.0

        init(file: StandardMIDIFile) { self.file = file }

        mutating func seconds(atTick tick: Int64) -> Double {
            if file.ticksPerSecond > 0 { return Double(tick) / Double(file.ticksPerSecond) }
            while next < file.tempos.count, file.tempos[next].tick < tick {
                let t = file.tempos[next]
                seconds += Double(t.tick - lastTick) * perQuarter / 1e6 / Double(file.ticksPerQuarter)
                lastTick = t.tick
                perQuarter = Double(t.microsecondsPerQuarter)
                next += 1
            }
            return seconds + Double(tick - lastTick) * perQuarter / 1e6 / Double(file.ticksPerQuarter)
        }
    }

    /// The file's first tempo in quarter notes per minute (120 when it sets none).
    public var firstTempoBPM: Double {
        guard ticksPerSecond == 0, let t = tempos.first(where: { $0.tick == 0 }) ?? tempos.first else { return 120 }
        return 60_000_000 / Double(max(t.microsecondsPerQuarter, 1))
    }

    /// Track `index` as a sequence at `sampleRate` (real time, through the file's tempo map).
    public func sequence(track index: Int, sampleRate: Int) -> MIDISequence {
        let track = tracks[index]
        // Clamped just past the timeline's end before the conversion: a file's ticks may
        // reach 2^48 at 16.7 s each, far beyond Int64 frames (a trap); the callers refuse
        // anything past the timeline with their own message.
        let limit = Double(SessionLimits.maximumTimelineFrames + 1)
        // A track's ticks only rise, so one walk through the tempo changes serves them all
        // (``seconds(atTick:)`` walks them again for every event: a crafted file with a
        // million of each took hours to open).
        var clock = TickClock(file: self)
        func frame(_ tick: Int64) -> Int64 { Int64(min((clock.seconds(atTick: tick) * Double(sampleRate)).rounded(), limit)) }
        let events = track.events.map { MIDISequence.Event(frame: frame($0.tick), status: $0.status, data1: $0.data1, data2: $0.data2) }
        // A second walk for the SysEx, whose ticks rise on their own.
        clock = TickClock(file: self)
        let sysEx = track.sysEx.map { MIDISequence.SysEx(frame: frame($0.tick), status: $0.status, data: $0.data) }
        return MIDISequence(events: events, sysEx: sysEx, lengthFrames: frame(track.endTick))
    }

    /// Every track merged into one sequence (a format-0 reading of a format-1 file).
    public func mergedSequence(sampleRate: Int) -> MIDISequence {
        let parts = tracks.indices.map { sequence(track: $0, sampleRate: sampleRate) }
        return MIDISequence(events: parts.flatMap(\.events), sysEx: parts.flatMap(\.sysEx), lengthFrames: parts.map(\.lengthFrames).max() ?? 0)
    }

    /// A format-0 file holding `sequence` at `tempoMap`'s tempo and meter, named `name`. The
    /// tick is one frame (or a whole number of frames) whenever the session's tempo allows a
    /// quarter note of at most 32767 frames, so a file Tapedeck writes and reads again keeps
    /// every event on its frame; otherwise 960 ticks a quarter.
    public static func file(of sequence: MIDISequence, tempoMap: TempoMap, name: String?, ticksPerQuarter: Int? = nil) -> StandardMIDIFile {
        let quarterBPM = tempoMap.tempoBPM * 4 / Double(tempoMap.timeSignature.beatUnit)
        let framesPerQuarter = Double(tempoMap.sampleRate) * 60 / quarterBPM
        let ppq = ticksPerQuarter ?? exactTicksPerQuarter(framesPerQuarter: framesPerQuarter)
        let framesPerTick = framesPerQuarter / Double(ppq)
        func tick(_ frame: Int64) -> Int64 { Int64((Double(frame) / framesPerTick).rounded()) }
        let events = sequence.events.map { Event(tick: tick($0.frame), status: $0.status, data1: $0.data1, data2: $0.data2) }
        let sysEx = sequence.sysEx.map { SysEx(tick: tick($0.frame), status: $0.status, data: $0.data) }
        let track = Track(name: name, events: events, sysEx: sysEx, endTick: tick(sequence.lengthFrames))
        let micros = Int((60_000_000 / quarterBPM).rounded())
        return StandardMIDIFile(format: 0, ticksPerQuarter: ppq, tracks: [track],
                                tempos: [Tempo(tick: 0, microsecondsPerQuarter: micros)], timeSignature: tempoMap.timeSignature)
    }

    /// Ticks per quarter that make a tick a whole number of frames (one, when it fits), or
    /// 960 when the quarter note is not a whole number of frames.
    static func exactTicksPerQuarter(framesPerQuarter: Double) -> Int {
        let whole = framesPerQuarter.rounded()
        guard abs(framesPerQuarter - whole) < 1e-9, whole >= 1 else { return 960 }
        let frames = Int(whole)
        for k in 1...frames where frames % k == 0 && frames / k <= 32767 { return frames / k }
        return 960
    }
}

// MARK: - Reading

extension StandardMIDIFile {
    /// Reads `path`; a damaged or foreign file throws, naming the file and what is wrong.
    public static func read(path: String) throws(AudioFileError) -> StandardMIDIFile {
        let bytes = try FileSystem.readAll(path: path, limitBytes: maximumFileBytes)
        return try parse(bytes, path: path)
    }

    /// Reads the bytes of a file; `path` names it in errors.
    public static func parse(_ bytes: [UInt8], path: String) throws(AudioFileError) -> StandardMIDIFile {
        var r = ByteReader(bytes: bytes, path: path)
        guard try r.tag() == "MThd" else {
            throw AudioFileError(path: path, reason: bytes.isEmpty ? "is empty, not a MIDI file" : "is not a Standard MIDI File (no MThd header)")
        }
        let headerLength = try r.uint32()
        guard headerLength >= 6 else { throw r.fail("header too short (\(headerLength) bytes)") }
        let format = Int(try r.uint16())
        let trackCount = Int(try r.uint16())
        let division = try r.uint16()
        try r.skip(Int(headerLength) - 6)
        guard format <= 2 else { throw r.fail("format \(format) is not 0, 1 or 2") }
        var file = StandardMIDIFile(format: format)
        if division & 0x8000 != 0 {
            let fps = Int(256 - Int(division >> 8))
            let perFrame = Int(division & 0xFF)
            guard [24, 25, 29, 30].contains(fps), perFrame > 0 else { throw r.fail("SMPTE division \(fps) fps × \(perFrame) is not valid") }
            file.ticksPerSecond = (fps == 29 ? 30 : fps) * perFrame
            file.ticksPerQuarter = 1
        } else {
            guard division > 0 else { throw r.fail("0 ticks per quarter note") }
            file.ticksPerQuarter = Int(division)
        }
        var total = 0
        while file.tracks.count < trackCount, !r.atEnd {
            let tag = try r.tag()
            let length = Int(try r.uint32())
            guard length <= r.remaining else { throw r.fail("chunk '\(tag.terminalSafe)' claims \(length) bytes, only \(r.remaining) remain") }
            guard tag == "MTrk" else { try r.skip(length); continue }
            let end = r.offset + length
            file.tracks.append(try readTrack(&r, end: end, into: &file, total: &total))
            r.offset = end
        }
        guard !file.tracks.isEmpty else { throw AudioFileError(path: path, reason: "holds no MIDI track") }
        file.tempos.sort { $0.tick < $1.tick }
        file.laterTimeSignatures.sort { $0.tick < $1.tick }
        return file
    }

    private static func readTrack(_ r: inout ByteReader, end: Int, into file: inout StandardMIDIFile, total: inout Int) throws(AudioFileError) -> Track {
        var track = Track()
        var tick: Int64 = 0
        var running: UInt8 = 0
        while r.offset < end {
            tick += Int64(try r.variableLength())
            guard tick < (1 << 48) else { throw r.fail("ticks run past any sensible length") }
            var status = try r.byte()
            if status < 0x80 {
                guard running >= 0x80 else { throw r.fail("data byte 0x\(String(status, radix: 16)) with no status before it") }
                status = running
                r.offset -= 1
            }
            switch status {
            case 0xFF:
                running = 0
                let type = try r.byte()
                let length = Int(try r.variableLength())
                let data = Array(try r.bytes(length))
                switch type {
                case 0x03 where track.name == nil: track.name = String(decoding: data, as: UTF8.self)
                case 0x51 where length == 3:
                    // A tempo of 0 µs a quarter is no tempo (it would mean every note at once): ignored.
                    let perQuarter = Int(data[0]) << 16 | Int(data[1]) << 8 | Int(data[2])
                    if perQuarter > 0 {
                        // Tempo changes count as events: each one is work for every note after it.
                        total += 1
                        guard total <= SessionLimits.maximumMIDIEvents else {
                            throw r.fail("more than \(SessionLimits.maximumMIDIEvents) events")
                        }
                        file.tempos.append(Tempo(tick: tick, microsecondsPerQuarter: perQuarter))
                    }
                case 0x58 where length >= 2:
                    let unit = 1 << Int(min(data[1], 5))
                    guard data[0] >= 1 && data[0] <= 64 else { break }
                    let signature = TimeSignature(beatsPerBar: Int(data[0]), beatUnit: unit)
                    if file.timeSignature == nil && tick == 0 || file.timeSignature == nil && file.laterTimeSignatures.isEmpty {
                        file.timeSignature = signature
                    } else if file.laterTimeSignatures.count < SessionLimits.maximumMarkers {
                        file.laterTimeSignatures.append(MeterAtTick(tick: tick, signature: signature))
                    }
                case 0x2F:
                    track.endTick = tick
                    return track
                default: break
                }
            case 0xF0, 0xF7:
                running = 0
                // The length is checked against the track before anything is allocated: a
                // damaged length (up to 2^28 from four bytes) is refused, never reserved.
                let length = Int(try r.variableLength())
                guard length <= end - r.offset else {
                    throw r.fail("SysEx at tick \(tick) claims \(length) bytes, only \(max(0, end - r.offset)) remain in its track")
                }
                total += 1
                guard total <= SessionLimits.maximumMIDIEvents else {
                    throw r.fail("more than \(SessionLimits.maximumMIDIEvents) events")
                }
                track.sysEx.append(SysEx(tick: tick, status: status, data: Array(try r.bytes(length))))
            case 0xF1...0xFE:
                throw r.fail("system message 0x\(String(status, radix: 16)) inside a track")
            default:
                running = status
                let d1 = try r.byte()
                let d2: UInt8 = MIDISequence.dataBytes(status: status) == 2 ? try r.byte() : 0
                guard d1 < 0x80, d2 < 0x80 else { throw r.fail("data byte above 127 after status 0x\(String(status, radix: 16))") }
                total += 1
                guard total <= SessionLimits.maximumMIDIEvents else {
                    throw r.fail("more than \(SessionLimits.maximumMIDIEvents) events")
                }
                track.events.append(Event(tick: tick, status: status, data1: d1, data2: d2))
            }
        }
        // No end-of-track event: the track ends with its chunk (many files get this wrong).
        track.endTick = tick
        return track
    }
}

/// Reads big-endian numbers and MIDI variable-length quantities, with every length checked.
private struct ByteReader {
    let bytes: [UInt8]
    let path: String
    var offset = 0

    var remaining: Int { bytes.count - offset }
    var atEnd: Bool { offset >= bytes.count }

    func fail(_ why: String) -> AudioFileError {
        AudioFileError(path: path, reason: "not a valid MIDI file: \(why) (at byte \(offset))")
    }

    mutating func byte() throws(AudioFileError) -> UInt8 {
        guard offset < bytes.count else { throw fail("it ends in the middle of an event") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func bytes(_ n: Int) throws(AudioFileError) -> ArraySlice<UInt8> {
        guard n >= 0, n <= remaining else { throw fail("a length of \(n) runs past the end") }
        defer { offset += n }
        return bytes[offset..<offset + n]
    }

    mutating func skip(_ n: Int) throws(AudioFileError) { _ = try bytes(n) }

    mutating func tag() throws(AudioFileError) -> String {
        String(decoding: try bytes(4), as: UTF8.self)
    }

    mutating func uint16() throws(AudioFileError) -> UInt16 {
        let b = try bytes(2)
        return UInt16(b[b.startIndex]) << 8 | UInt16(b[b.startIndex + 1])
    }

    mutating func uint32() throws(AudioFileError) -> UInt32 {
        let b = try bytes(4)
        return b.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// At most four bytes (28 bits), as the format allows.
    mutating func variableLength() throws(AudioFileError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            let b = try byte()
            value = value << 7 | UInt32(b & 0x7F)
            if b & 0x80 == 0 { return value }
        }
        throw fail("a variable-length number longer than four bytes")
    }
}

// MARK: - Writing

extension StandardMIDIFile {
    /// The file's bytes: a header and one `MTrk` per track; tempo and time signature in the
    /// first track. Events at equal ticks keep their order; running status is not used (every
    /// reader handles full status bytes).
    public func bytes() -> [UInt8] {
        var out: [UInt8] = Array("MThd".utf8)
        out += Self.be32(6) + Self.be16(UInt16(tracks.count > 1 ? 1 : format)) + Self.be16(UInt16(tracks.count))
        out += Self.be16(UInt16(min(max(ticksPerQuarter, 1), 32767)))
        for (i, track) in tracks.enumerated() {
            var body: [UInt8] = []
            var last: Int64 = 0
            func put(_ tick: Int64, _ bytes: [UInt8]) {
                body += Self.variableLength(UInt32(clamping: max(0, tick - last)))
                body += bytes
                last = max(last, tick)
            }
            if let name = track.name {
                let text = Array(name.utf8.prefix(1000))
                put(0, [0xFF, 0x03] + Self.variableLength(UInt32(text.count)) + text)
            }
            // Everything in tick order (a delta cannot go back): in the first track the tempos
            // and meters (the first meter at 0) go before the events of their tick.
            var metas: [(tick: Int64, bytes: [UInt8])] = []
            if i == 0 {
                metas = tempos.map { t in
                    let m = min(max(t.microsecondsPerQuarter, 1), 0xFFFFFF)
                    return (t.tick, [0xFF, 0x51, 0x03, UInt8(m >> 16), UInt8((m >> 8) & 0xFF), UInt8(m & 0xFF)])
                }
                let meters = (timeSignature.map { [MeterAtTick(tick: 0, signature: $0)] } ?? []) + laterTimeSignatures
                metas += meters.map { m in
                    let power = UInt8(max(0, Int(log2(Double(m.signature.beatUnit)).rounded())))
                    return (m.tick, [0xFF, 0x58, 0x04, UInt8(m.signature.beatsPerBar), power, 24, 8])
                }
                metas = metas.enumerated().sorted { ($0.element.tick, $0.offset) < ($1.element.tick, $1.offset) }.map(\.element)
            }
            var m = 0, x = 0
            // SysEx goes after the metas of its tick and before the channel messages there (a
            // device set up by SysEx at the start is set up before the first note).
            func putSysEx(through tick: Int64) {
                while x < track.sysEx.count && track.sysEx[x].tick <= tick {
                    while m < metas.count && metas[m].tick <= track.sysEx[x].tick { put(metas[m].tick, metas[m].bytes); m += 1 }
                    let s = track.sysEx[x]
                    put(s.tick, [s.status] + Self.variableLength(UInt32(clamping: s.data.count)) + s.data)
                    x += 1
                }
            }
            for e in track.events {
                putSysEx(through: e.tick)
                while m < metas.count && metas[m].tick <= e.tick { put(metas[m].tick, metas[m].bytes); m += 1 }
                put(e.tick, MIDISequence.dataBytes(status: e.status) == 2 ? [e.status, e.data1 & 0x7F, e.data2 & 0x7F] : [e.status, e.data1 & 0x7F])
            }
            putSysEx(through: Int64.max)
            while m < metas.count { put(metas[m].tick, metas[m].bytes); m += 1 }
            put(max(track.endTick, last), [0xFF, 0x2F, 0x00])
            out += Array("MTrk".utf8) + Self.be32(UInt32(body.count)) + body
        }
        return out
    }

    /// Writes the file durably, replacing `path` atomically (a crash leaves the old file or
    /// the new one).
    public func write(to path: String) throws(AudioFileError) {
        try DurableFile.replace(path, with: bytes())
    }

    /// Writes the file as a new name that must not exist yet (never over another file, never
    /// through a link).
    public func writeNew(to path: String) throws(AudioFileError) {
        let fd = FileSystem.createExclusive(path)
        guard fd >= 0 else { throw AudioFileError(path: path, reason: "cannot create: \(FileSystem.createProblem(path: path, code: -fd))") }
        close(fd)
        do { try DurableFile.replace(path, with: bytes()) } catch {
            unlink(path)
            throw error
        }
    }

    static func variableLength(_ value: UInt32) -> [UInt8] {
        var v = min(value, 0x0FFF_FFFF)
        var out: [UInt8] = [UInt8(v & 0x7F)]
        v >>= 7
        while v > 0 {
            out.insert(UInt8(v & 0x7F) | 0x80, at: 0)
            v >>= 7
        }
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }
    static func be16(_ v: UInt16) -> [UInt8] { [UInt8(v >> 8), UInt8(v & 0xFF)] }
}
