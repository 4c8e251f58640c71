import Synchronization
import TapedeckCore
import TapedeckIO
import TapedeckTakes

/// One MIDI take to record: a MIDI track of the pass, into a Standard MIDI File.
public struct MIDITakeRequest: Sendable {
    /// The track (0-based) it is recorded for.
    public var track: Int
    /// The `.mid` file to create (absolute).
    public var path: String
    /// Written beside the take before it starts (the caller removes it once placed).
    public var marker: TakeMarker?
    /// The session's tempo and meter, which the file is written at.
    public var tempoMap: TempoMap
    /// The track's name, written into the file.
    public var trackName: String?
    /// The transport's speed while recording: events land on the timeline frames heard.
    public var speed: Double

    /// Creates a request.
    public init(track: Int, path: String, marker: TakeMarker? = nil, tempoMap: TempoMap, trackName: String? = nil, speed: Double = 1) {
        self.track = track
        self.path = path
        self.marker = marker
        self.tempoMap = tempoMap
        self.trackName = trackName
        self.speed = speed
    }
}

/// A MIDI take as it was closed.
public struct MIDITakeOutcome: Sendable {
    /// The request it answered.
    public var request: MIDITakeRequest
    /// Frames the take spans (the pass's length; its file's end).
    public var frameCount: Int64
    /// Messages kept.
    public var eventCount: Int
    /// Why the file could not be written, if it could not.
    public var error: String?
}

/// One MIDI take of a pass. The capture writer thread keeps its messages — those played
/// between the pass's first kept frame and its last, exactly the span its audio takes keep —
/// and rewrites its file twice a second (atomically: a crash leaves the last complete file),
/// then once more when the pass ends, with notes still held switched off at its end.
final class MIDITakeLane: @unchecked Sendable {
    let request: MIDITakeRequest
    /// Set once the file is final.
    let done = Atomic<Bool>(false)
    let keptEvents = Atomic<Int>(0)
    let lengthFrames = Atomic<Int64>(0)
    let errorText = Mutex<String?>(nil)

    // Writer thread.
    var pending: [CapturedMIDI] = []
    private var events: [MIDISequence.Event] = []
    private var held: [Int: Int] = [:]
    private var writtenCount = -1
    var lastWrite: Int64 = 0

    /// Writes the marker, then an empty file under the claimed name. Control thread.
    init(request: MIDITakeRequest) throws {
        self.request = request
        if let marker = request.marker { try marker.write(forAudio: request.path) }
        do {
            try StandardMIDIFile.file(of: MIDISequence(), tempoMap: request.tempoMap, name: request.trackName).writeNew(to: request.path)
        } catch {
            if request.marker != nil { TakeMarker.remove(forAudio: request.path) }
            throw error
        }
    }

    /// Keeps `message`, played `frame` frames into the take (device time). Writer thread.
    func keep(_ message: CapturedMIDI, frame: Int64) {
        let e = MIDISequence.Event(frame: Int64((Double(frame) * request.speed).rounded()), status: message.status,
                                   data1: message.data1, data2: message.data2)
        let key = Int(e.status & 0x0F) << 7 | Int(e.data1)
        if e.isNoteOn {
            held[key, default: 0] += 1
        } else if e.isNoteOff {
            // An off whose on came before the take began has nothing to end.
            guard let n = held[key], n > 0 else { return }
            held[key] = n - 1
        }
        events.append(e)
        keptEvents.store(events.count, ordering: .relaxed)
    }

    /// Writes the file as it stands, lasting `frames` (device time), when anything changed.
    /// Writer thread.
    func write(frames: Int64, final: Bool) {
        let length = Int64((Double(max(frames, 0)) * request.speed).rounded())
        var out = events
        if final {
            // Notes still held end with the take; one starting on its last frame could not sound.
            var held = self.held
            out.removeAll { e in
                guard e.isNoteOn, e.frame >= length - 1 else { return false }
                held[Int(e.status & 0x0F) << 7 | Int(e.data1), default: 1] -= 1
                return true
            }
            for (key, count) in held where count > 0 {
                for _ in 0..<count {
                    out.append(MIDISequence.Event(frame: max(length - 1, 0), status: 0x80 | UInt8(key >> 7), data1: UInt8(key & 0x7F)))
                }
            }
        }
        lengthFrames.store(length, ordering: .releasing)
        guard final || out.count != writtenCount else { return }
        writtenCount = out.count
        let sequence = MIDISequence(events: out.filter { $0.frame < max(length, 1) }, lengthFrames: length)
        do {
            try StandardMIDIFile.file(of: sequence, tempoMap: request.tempoMap, name: request.trackName).write(to: request.path)
        } catch {
            errorText.withLock { if $0 == nil { $0 = error.description } }
        }
        if final {
            keptEvents.store(sequence.events.count, ordering: .relaxed)
            done.store(true, ordering: .releasing)
        }
    }
}

extension CaptureWriter {
    /// Hands played messages to the MIDI takes of the running passes and keeps each file
    /// current. Writer thread.
    func drainMIDI(_ sets: [TakeSet], now: Int64) {
        guard let hub = midiHub else { return }
        let open = sets.filter { set in set.midiLanes.contains { !$0.done.load(ordering: .relaxed) } }
        while let message = hub.capture.pop() {
            for set in open { for lane in set.midiLanes { lane.pending.append(message) } }
        }
        for set in open {
            let start = set.startDeviceFrame.load(ordering: .acquiring)
            let kept = set.framesKept.load(ordering: .acquiring)
            let ended = set.hasEnded
            for lane in set.midiLanes where !lane.done.load(ordering: .relaxed) {
                if start != .max {
                    var waiting: [CapturedMIDI] = []
                    for m in lane.pending {
                        let frame = m.playedDeviceFrame - start
                        if frame < 0 { continue }        // count-in, pre-roll
                        if frame < kept { lane.keep(m, frame: frame) } else { waiting.append(m) }
                    }
                    lane.pending = waiting
                }
                if ended {
                    // Messages played before the end arrive up to the MIDI latency after it.
                    let heard = board.deviceFrame.load(ordering: .relaxed)
                    let settled = start == .max || !board.deviceRunning.load(ordering: .acquiring)
                        || heard >= start + kept + set.midiLatencyFrames
                    if settled {
                        lane.pending = []
                        lane.write(frames: start == .max ? 0 : kept, final: true)
                    }
                } else if now - lane.lastWrite >= headerInterval {
                    lane.lastWrite = now
                    lane.write(frames: kept, final: false)
                }
            }
        }
    }
}
