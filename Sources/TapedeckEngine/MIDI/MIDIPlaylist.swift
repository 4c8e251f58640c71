import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// One event of a track's MIDI on the timeline.
struct TimelineMIDIEvent: BitwiseCopyable {
    var frame: Int64
    var status: UInt8
    var data1: UInt8
    var data2: UInt8
}

/// A track's MIDI regions as one sorted list of timeline events, read from their files when
/// a graph (or an export) is built, so the audio thread only ever searches memory: regions
/// are cut to their length (notes they cut are switched off at their end), overlapping
/// regions all play.
///
/// Built on the control thread; read-only afterwards, so any number of threads may read it.
final class MIDIPlaylist: @unchecked Sendable {
    /// What it was built from, to reuse it while unchanged.
    let sources: [GraphSpec.Source]
    private let events: UnsafeMutablePointer<TimelineMIDIEvent>
    /// Events held.
    let count: Int

    /// Reads every source's file and merges them. Control thread.
    init(sources: [GraphSpec.Source], sampleRate: Int) throws(AudioFileError) {
        self.sources = sources
        var all: [MIDISequence.Event] = []
        for source in sources {
            let whole = try MIDIRegionFile.read(path: source.path, sampleRate: sampleRate)
            let part = whole.clipped(offset: source.region.sourceOffsetFrame, length: source.region.lengthFrames)
            all += part.events.map { var e = $0; e.frame += source.region.timelineStartFrame; return e }
        }
        let sorted = MIDISequence(events: all).events
        count = sorted.count
        events = .allocate(capacity: max(count, 1))
        for (i, e) in sorted.enumerated() {
            (events + i).initialize(to: TimelineMIDIEvent(frame: e.frame, status: e.status, data1: e.data1, data2: e.data2))
        }
    }

    deinit { events.deallocate() }

    /// Index of the first event at or after `frame`.
    ///
    /// Audio thread: a binary search, nothing else.
    @inline(__always)
    func firstIndex(atOrAfter frame: Int64) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if events[mid].frame < frame { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Appends the events of timeline frames `[from, to)` to `out` (holding `count` events,
    /// room for `capacity`), each at block offset `base + (frame − from) ÷ speed`; returns
    /// how many were appended (fewer when `out` is full). Notes switched on and off are
    /// marked in `held`.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func collect(from: Int64, to: Int64, base: Int, speed: Double, into out: UnsafeMutablePointer<MIDIEvent>,
                 count: Int, capacity: Int, held: HeldNotes) -> Int {
        guard to > from else { return 0 }
        var i = firstIndex(atOrAfter: from)
        var n = count
        while i < self.count && events[i].frame < to && n < capacity {
            let e = events[i]
            let offset = base + Int(Double(e.frame - from) / speed)
            out[n] = MIDIEvent(frameOffset: Int32(offset), status: e.status, data1: e.data1, data2: e.data2)
            let kind = e.status & 0xF0
            if kind == 0x90 && e.data2 > 0 { held.set(channel: e.status, note: e.data1, on: true) }
            else if kind == 0x80 || kind == 0x90 { held.set(channel: e.status, note: e.data1, on: false) }
            n += 1
            i += 1
        }
        return n - count
    }
}

/// Which notes are sounding (16 channels × 128 pitches), so they can be switched off when
/// the transport stops, jumps, or wraps round a loop. Its bits are allocated once, when it is
/// made (a tuple of words would have the runtime look its type up, and allocate, on first
/// use on the audio thread).
final class HeldNotes: @unchecked Sendable {
    private let words: UnsafeMutablePointer<UInt64>
    /// Notes held.
    private(set) var count = 0

    /// No note held. Control thread.
    init() {
        words = .allocate(capacity: 32)
        words.initialize(repeating: 0, count: 32)
    }

    deinit { words.deallocate() }

    /// Marks `note` on `channel` held or released. Audio thread.
    @inline(__always)
    func set(channel: UInt8, note: UInt8, on: Bool) {
        let index = Int(channel & 0x0F) << 7 | Int(note & 0x7F)
        let mask: UInt64 = 1 << UInt64(index & 63)
        let was = words[index >> 6] & mask != 0
        if on && !was { words[index >> 6] |= mask; count += 1 }
        if !on && was { words[index >> 6] &= ~mask; count -= 1 }
    }

    /// Appends a note-off at `offset` for every held note to `out` (up to `capacity`) and
    /// forgets those; returns how many were appended. Notes that did not fit stay held, so a
    /// later period ends them rather than leaving them sounding. Audio thread.
    @inline(__always)
    func release(at offset: Int32, into out: UnsafeMutablePointer<MIDIEvent>, count start: Int, capacity: Int) -> Int {
        guard count > 0 else { return 0 }
        var n = start
        for w in 0..<32 where words[w] != 0 {
            var word = words[w]
            while word != 0 && n < capacity {
                let bit = word.trailingZeroBitCount
                let index = w << 6 | bit
                out[n] = MIDIEvent(frameOffset: offset, status: 0x80 | UInt8(index >> 7), data1: UInt8(index & 0x7F), data2: 0)
                n += 1
                word &= word - 1
            }
            words[w] = word
        }
        count -= n - start
        return n - start
    }

    /// Forgets every held note without a note-off (an all-notes-off said it). Audio thread.
    @inline(__always)
    func forget() {
        for w in 0..<32 { words[w] = 0 }
        count = 0
    }
}
