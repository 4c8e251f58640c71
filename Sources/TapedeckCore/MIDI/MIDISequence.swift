/// MIDI as Tapedeck keeps it: channel-voice messages at frame positions, and SysEx messages
/// kept beside them. Pure values, no I/O (Standard MIDI Files are read and written in
/// TapedeckIO).
///
/// Positions are `Int64` frames at the session rate, like audio: a MIDI region's file frame 0
/// is its source's start, so ``Region/sourceOffsetFrame`` and ``Region/lengthFrames`` mean
/// for MIDI exactly what they mean for audio, and moving, trimming, splitting and take lanes
/// work on MIDI regions unchanged.
public struct MIDISequence: Equatable, Sendable {
    /// One channel-voice message (note on/off, controller, program change, pitch bend, …).
    public struct Event: Equatable, Sendable {
        /// Where it happens, in frames from the sequence's start.
        public var frame: Int64
        /// Status byte (type in the high nibble, channel in the low).
        public var status: UInt8
        /// First data byte.
        public var data1: UInt8
        /// Second data byte (0 for one-data-byte messages: program change, channel pressure).
        public var data2: UInt8

        /// Creates an event.
        public init(frame: Int64, status: UInt8, data1: UInt8, data2: UInt8 = 0) {
            self.frame = frame
            self.status = status
            self.data1 = data1
            self.data2 = data2
        }

        /// A note-on with non-zero velocity.
        public var isNoteOn: Bool { status & 0xF0 == 0x90 && data2 > 0 }
        /// A note-off, or a note-on with velocity 0.
        public var isNoteOff: Bool { status & 0xF0 == 0x80 || (status & 0xF0 == 0x90 && data2 == 0) }
        /// The channel, 0…15.
        public var channel: UInt8 { status & 0x0F }
    }

    /// A system-exclusive message at a frame, as a Standard MIDI File holds it: `status` 0xF0
    /// (a message, or its first packet) or 0xF7 (a continuation packet, or an escape carrying
    /// any bytes), and the bytes that followed its length in the file (for a whole message,
    /// the payload and its closing 0xF7). Kept byte for byte so a file imported and exported
    /// gives back what it held.
    public struct SysEx: Equatable, Sendable {
        /// Where it happens, in frames from the sequence's start.
        public var frame: Int64
        /// 0xF0 or 0xF7.
        public var status: UInt8
        /// The bytes after the status and length.
        public var data: [UInt8]

        /// Creates a SysEx message.
        public init(frame: Int64, status: UInt8 = 0xF0, data: [UInt8]) {
            self.frame = frame
            self.status = status
            self.data = data
        }
    }

    /// A note: its on and off paired.
    public struct Note: Equatable, Sendable {
        /// Channel 0…15.
        public var channel: UInt8
        /// Note number 0…127.
        public var pitch: UInt8
        /// Velocity 1…127.
        public var velocity: UInt8
        /// Frame of the note-on.
        public var startFrame: Int64
        /// Frame of the note-off (at least `startFrame`).
        public var endFrame: Int64
    }

    /// The events, ordered by frame (events on one frame keep their order).
    public private(set) var events: [Event]
    /// SysEx messages, ordered by frame (those on one frame keep their order, so a message
    /// split into packets stays whole). Kept apart from ``events`` so an event stays a few
    /// bytes with no storage of its own: the audio thread copies events and must not touch
    /// reference counts or allocate; SysEx is carried through files, not played.
    public private(set) var sysEx: [SysEx]
    /// How long the sequence lasts: the end of the last event at least (a take's length, or a
    /// file's end-of-track).
    public var lengthFrames: Int64

    /// A sequence of `events` and `sysEx` (each sorted here, stably) lasting at least to the
    /// last one.
    public init(events: [Event] = [], sysEx: [SysEx] = [], lengthFrames: Int64 = 0) {
        self.events = MIDISequence.sorted(events)
        self.sysEx = sysEx.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        self.lengthFrames = max(lengthFrames, (self.events.last?.frame ?? -1) + 1, (self.sysEx.last?.frame ?? -1) + 1)
    }

    /// Data bytes after `status` in a channel-voice message.
    public static func dataBytes(status: UInt8) -> Int {
        let kind = status & 0xF0
        return kind == 0xC0 || kind == 0xD0 ? 1 : 2
    }

    /// `events` ordered by frame, stable; at equal frames note-offs come before note-ons, so
    /// a note repeated back to back is not cut by its predecessor's release.
    static func sorted(_ events: [Event]) -> [Event] {
        events.enumerated().sorted { a, b in
            if a.element.frame != b.element.frame { return a.element.frame < b.element.frame }
            let ao = a.element.isNoteOff ? 0 : 1, bo = b.element.isNoteOff ? 0 : 1
            if ao != bo { return ao < bo }
            return a.offset < b.offset
        }.map(\.element)
    }

    /// Every note, paired first-on first-off per channel and pitch; a note-on never switched
    /// off ends at ``lengthFrames``.
    public var notes: [Note] {
        var open: [Int: [(frame: Int64, velocity: UInt8)]] = [:]
        var out: [Note] = []
        for e in events {
            let key = Int(e.channel) << 7 | Int(e.data1 & 0x7F)
            if e.isNoteOn {
                open[key, default: []].append((e.frame, e.data2))
            } else if e.isNoteOff, var stack = open[key], !stack.isEmpty {
                let on = stack.removeFirst()
                open[key] = stack
                out.append(Note(channel: e.channel, pitch: e.data1, velocity: on.velocity, startFrame: on.frame, endFrame: e.frame))
            }
        }
        for (key, stack) in open {
            for on in stack {
                out.append(Note(channel: UInt8(key >> 7), pitch: UInt8(key & 0x7F), velocity: on.velocity,
                                startFrame: on.frame, endFrame: max(on.frame, lengthFrames)))
            }
        }
        return out.sorted { ($0.startFrame, $0.pitch) < ($1.startFrame, $1.pitch) }
    }

    /// The events from `offset` for `length` frames, moved to start at 0: notes sounding at the
    /// cut are switched off at its end (and notes switched on before it are left out, so nothing
    /// hangs). Controller and program values in force at `offset` are repeated at frame 0, so
    /// a region cut from the middle sounds as it did there.
    public func clipped(offset: Int64, length: Int64) -> MIDISequence {
        guard length > 0 else { return MIDISequence() }
        let end = offset + length
        var state: [Int: Event] = [:]     // last controller/program/bend per channel (and number) before the cut
        var out: [Event] = []
        var held: [Int: Int] = [:]        // notes sounding per key (the same pitch may overlap itself)
        for e in events {
            let key = Int(e.channel) << 7 | Int(e.data1 & 0x7F)
            if e.frame < offset {
                switch e.status & 0xF0 {
                case 0xB0: state[0x10000 | key] = e
                case 0xC0, 0xE0, 0xD0: state[Int(e.status) << 8] = e
                default: break
                }
                continue
            }
            if e.frame >= end { break }
            if e.isNoteOn {
                // A note starting on the last frame could not sound before it is cut.
                if e.frame >= end - 1 { continue }
                held[key, default: 0] += 1
            } else if e.isNoteOff {
                guard let n = held[key], n > 0 else { continue }
                held[key] = n > 1 ? n - 1 : nil
            }
            var moved = e
            moved.frame -= offset
            out.append(moved)
        }
        let carried = state.values.sorted { ($0.status, $0.data1) < ($1.status, $1.data1) }.map {
            Event(frame: 0, status: $0.status, data1: $0.data1, data2: $0.data2)
        }
        for (key, n) in held.sorted(by: { $0.key < $1.key }) {
            for _ in 0..<n { out.append(Event(frame: length - 1, status: 0x80 | UInt8(key >> 7), data1: UInt8(key & 0x7F), data2: 0)) }
        }
        // SysEx inside the span is kept at its place; none is repeated from before the cut
        // (unlike a controller, a SysEx message's effect cannot be known, and a dump
        // repeated at every split would be sent again and again).
        let keptSysEx = sysEx.filter { $0.frame >= offset && $0.frame < end }.map { s -> SysEx in
            var moved = s
            moved.frame -= offset
            return moved
        }
        return MIDISequence(events: carried + out, sysEx: keptSysEx, lengthFrames: length)
    }

    /// The sequence with every note-on moved `strength` (0…1) of the way to the nearest line
    /// of a grid `gridFrames` apart, measured on the timeline where file frame 0 lies at
    /// `origin`; each note's off moves with it (lengths are kept), other events (and SysEx)
    /// stay.
    /// Nothing moves before frame 0.
    public func quantized(gridFrames: Double, strength: Double, origin: Int64 = 0) -> MIDISequence {
        guard gridFrames >= 1, gridFrames.isFinite else { return self }
        return quantized(strength: strength, origin: origin) { ($0 / gridFrames).rounded() * gridFrames }
    }

    /// Each note's start moved by `strength` of the way to `line(timeline frame)` (the grid
    /// line the caller finds for it), its end with it.
    public func quantized(strength: Double, origin: Int64 = 0, line: (Double) -> Double) -> MIDISequence {
        guard strength > 0 else { return self }
        let s = min(strength, 1)
        var shifts: [Int: [Int64]] = [:]   // per channel and pitch: shifts of open notes, in order
        var out: [Event] = []
        out.reserveCapacity(events.count)
        for e in events {
            let key = Int(e.channel) << 7 | Int(e.data1 & 0x7F)
            var moved = e
            if e.isNoteOn {
                let timeline = Double(origin) + Double(e.frame)
                let target = line(timeline)
                let shift = max(Int64(((target - timeline) * s).rounded()), -e.frame)
                moved.frame += shift
                shifts[key, default: []].append(shift)
            } else if e.isNoteOff, var stack = shifts[key], !stack.isEmpty {
                let shift = stack.removeFirst()
                shifts[key] = stack
                moved.frame = max(0, moved.frame + shift)
            }
            out.append(moved)
        }
        return MIDISequence(events: out, sysEx: sysEx, lengthFrames: lengthFrames)
    }
}
