import Synchronization
import TapedeckCore
import TapedeckIO
import TapedeckTakes

/// One take to record: which track's input goes into which file.
public struct TakeRequest: Sendable {
    /// The track (0-based, in the graph) whose input is recorded.
    public var track: Int
    /// Channels its input has (1 or 2); must match the track's input in the graph.
    public var channelCount: Int
    /// The file to create.
    public var path: String
    /// WAV or FLAC.
    public var container: AudioContainer
    /// 16, 24 or 32f.
    public var encoding: SampleEncoding
    /// Where to build the take's peak file, if anywhere.
    public var peakPath: String?
    /// Written beside the take before its first frame; the caller removes it once the take is
    /// closed and placed.
    public var marker: TakeMarker?
    /// What the take says about itself, written into the file.
    public var metadata: TakeMetadata?
    /// When set, the unprocessed input is kept too, in this file ("both").
    public var dryPath: String?
    /// Record the input unprocessed; the input chain is then heard (monitored) only.
    public var recordsDry = false
    /// Frames per piece when the take is split into files (``TakePieces``); nil: one file.
    /// `path`, `peakPath` and the marker's file then name the first piece (`X-001.wav`).
    /// Not with a dry copy (the pieces would need two writers each).
    public var splitFrames: Int64?
    /// When set, a second copy of the take (and of each of its pieces) is written to this
    /// file, from its own ring by its own writer thread (``TakeLane/mirror``): a mirror
    /// that fails or fills stops alone, and so does the main file. Its crash marker is
    /// written beside it, so `recover --mirror` can bring either copy in. No peaks, no dry copy.
    public var mirrorPath: String?
    /// Frames this take's input lags what it was played against (``TakeLatency/totalFrames``
    /// for its own channels); nil: the gate's. Followed while it records
    /// (``Engine/setTakeLatency(_:index:frames:)``).
    public var latencyFrames: Int64?

    /// Creates a request.
    public init(track: Int, channelCount: Int, path: String, container: AudioContainer, encoding: SampleEncoding,
                peakPath: String? = nil, marker: TakeMarker? = nil, metadata: TakeMetadata? = nil) {
        self.track = track
        self.channelCount = channelCount
        self.path = path
        self.container = container
        self.encoding = encoding
        self.peakPath = peakPath
        self.marker = marker
        self.metadata = metadata
    }
}

/// When a pass of takes keeps input. Input is matched to the timeline after latency
/// compensation: the take's first frame is the input that arrived with the record point as
/// it was heard.
public struct TakeGate: Sendable, Equatable {
    /// Timeline frame where keeping starts, the first time the rolling transport reaches it
    /// (after a count-in, on the first pass of a loop). Nil: at once.
    public var recordPoint: Int64?
    /// Timeline frame where keeping stops (a punch's end). Nil: until stopped.
    public var endFrame: Int64?
    /// Stop after this many frames.
    public var maxFrames: Int64?
    /// Device frames between playing a frame and hearing it back in the input (0 when
    /// nothing plays): the overdub compensation.
    public var latencyFrames: Int64

    /// Creates a gate.
    public init(recordPoint: Int64? = nil, endFrame: Int64? = nil, maxFrames: Int64? = nil, latencyFrames: Int64 = 0) {
        self.recordPoint = recordPoint
        self.endFrame = endFrame
        self.maxFrames = maxFrames
        self.latencyFrames = latencyFrames
    }
}

/// A take that was recorded, as it was closed.
public struct TakeOutcome: Sendable {
    /// The request it answered.
    public var request: TakeRequest
    /// Frames in the file (dropped input counts: it is silence there).
    public var frameCount: Int64
    /// Input frames lost to a full capture ring (silence in the file).
    public var droppedFrames: Int64
    /// Why the file stopped early or could not be closed, if it did.
    public var error: String?
    /// Files the take was written to: 1, or the pieces of a split take
    /// (``TakeRequest/splitFrames``), each full but the last.
    public var pieceCount = 1
    /// The mirror copy (``TakeRequest/mirrorPath``), as it was closed; nil without one.
    public var mirror: MirrorOutcome?
}

/// The second copy of a take (``TakeRequest/mirrorPath``), as it was closed.
public struct MirrorOutcome: Sendable {
    /// The mirror's file (its first piece's when split).
    public var path: String
    /// Frames its file(s) hold.
    public var frameCount: Int64
    /// Frames its own ring lost to a slow mirror disk (silence there).
    public var droppedFrames: Int64
    /// Why it stopped early, could not be created or closed, if it did.
    public var error: String?
    /// Files written: 1, or the pieces.
    public var pieceCount: Int
}

/// One take of a pass: its ring from the audio thread, its writers, and its gaps.
final class TakeLane: @unchecked Sendable {
    let request: TakeRequest
    let ring: FrameRing
    /// The file being written: the take's, or its current piece's when split (replaced
    /// by the disk thread only, in ``startNextPiece()``).
    var writer: AudioFileWriter
    let dryWriter: AudioFileWriter?
    /// The piece being written (0-based) and the take frame where it starts; 0 and 0 for
    /// a take that is not split. Disk thread (the control thread reads them once it is done).
    var pieceIndex = 0
    var pieceStartFrame: Int64 = 0
    /// Dropped spans the writer fills with silence: (take frame, count).
    let gaps = SPSCQueue<TakeGap>(capacity: 4096)
    let droppedFrames = Atomic<Int64>(0)
    /// Frames the writer has written (gaps included). Writer thread stores.
    let writtenFrames = Atomic<Int64>(0)
    /// Set by the writer thread when a write failed; nothing more is written.
    let failed = Atomic<Bool>(false)
    let errorText = Mutex<String?>(nil)
    /// Frames the file holds since its write failed (valid once ``failed``): what was kept.
    let keptAtFailure = Atomic<Int64>(0)
    /// Bytes a second of recording adds to the file(s): frames × channels × sample size
    /// (for FLAC an upper bound), the dry copy included.
    let bytesPerSecond: Int64
    /// Disk-thread scratch for one block, all channels.
    let scratch: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    let scratchFrames: Int
    /// Channels the ring carries per frame: the take's, twice when a dry copy is kept.
    var ringChannels: Int { ring.channelCount }
    /// The take's second copy (``TakeRequest/mirrorPath``): a lane of its own, filled by the
    /// audio thread beside this one and drained by the mirror writer thread, so neither
    /// disk can hold up the other. Nil without a mirror, or when its file could not be
    /// created (``mirrorOpenError``: the take records on without it).
    let mirror: TakeLane?
    /// Why the mirror's file could not be created, if it could not.
    let mirrorOpenError: String?
    /// Whether this lane is a mirror (its failures stop it alone, and are said as the mirror's).
    let isMirror: Bool
    /// The take's waveform as it is written, for the screen (nil for a mirror: the same take).
    let live: LivePeaks?

    // The take's own place (audio thread, but for the atomics).
    /// Frames its input lags what it was played against, as the audio thread applies it.
    var latencyFrames: Int64 = 0
    /// The latency the control thread wants applied from the next period on.
    let latencyTarget = Atomic<Int64>(0)
    /// Take frames kept so far (silence included).
    var kept: Int64 = 0
    /// ``kept``, published.
    let framesKept = Atomic<Int64>(0)

    // A device clock that cannot tell yet whether frames were lost (JACK: see
    // `JACKClockGaps`): the writer holds the take's frames from ``holdFrom`` on until it
    // can, so silence for what was lost goes before them, where it was lost.
    /// Take frame the writer writes up to, no further (`.max`: no hold).
    let holdFrom = Atomic<Int64>(.max)
    /// Audio thread: the take frame the hold began at (-1: none), silence inserted there so
    /// far, and dropped spans told meanwhile (pushed once the hold ends, after what it inserted).
    var holdAt: Int64 = -1
    var insertedAtHold: Int64 = 0
    /// The playhead when the hold began (where a span it drops is marked).
    var holdPosition: Int64 = 0
    let heldDrops: UnsafeMutablePointer<TakeGap>
    var heldDropCount = 0
    static let heldDropCapacity = 16

    init(request: TakeRequest, ringFrames: Int, blockFrames: Int, sampleRate: Int, isMirror: Bool = false) throws {
        self.request = request
        self.isMirror = isMirror
        live = isMirror ? nil : LivePeaks()
        let channels = request.channelCount * (request.dryPath != nil ? 2 : 1)
        ring = FrameRing(channelCount: channels, capacityFrames: ringFrames)
        let format = AudioFileFormat(container: request.container, encoding: request.encoding, sampleRate: sampleRate,
                                     channelCount: request.channelCount)
        if let marker = request.marker { try marker.write(forAudio: request.path) }
        do {
            writer = try AudioFileWriter(path: request.path, format: format, peakPath: request.peakPath, metadata: request.metadata)
            writer.updateHeader()
            dryWriter = try request.dryPath.map { p throws(AudioFileError) in
                try AudioFileWriter(path: p, format: format, metadata: request.metadata)
            }
        } catch {
            if request.marker != nil { TakeMarker.remove(forAudio: request.path) }
            throw error
        }
        bytesPerSecond = Int64(sampleRate * request.channelCount * max(1, format.encoding.bits / 8) * (request.dryPath != nil ? 2 : 1))
        scratchFrames = blockFrames
        heldDrops = .allocate(capacity: TakeLane.heldDropCapacity)
        scratch = .allocate(capacity: channels)
        for c in 0..<channels { (scratch + c).initialize(to: .allocate(capacity: blockFrames)) }
        if let mirrorPath = request.mirrorPath, !isMirror {
            var copy = request
            copy.path = mirrorPath
            copy.peakPath = nil
            copy.dryPath = nil
            copy.mirrorPath = nil
            do {
                mirror = try TakeLane(request: copy, ringFrames: ringFrames, blockFrames: blockFrames, sampleRate: sampleRate,
                                      isMirror: true)
                mirrorOpenError = nil
            } catch {
                mirror = nil
                mirrorOpenError = "\(error)"
            }
        } else {
            mirror = nil
            mirrorOpenError = nil
        }
    }

    deinit {
        for c in 0..<ring.channelCount { scratch[c].deallocate() }
        scratch.deallocate()
        heldDrops.deallocate()
    }

    /// Marks the lane failed with `text` (the first failure wins) and `keptFrames` in its
    /// file; true the first time. Writer thread.
    @discardableResult
    func fail(_ text: String, keptFrames: Int64) -> Bool {
        let first = errorText.withLock { e -> Bool in
            guard e == nil else { return false }
            e = text
            return true
        }
        guard first else { return false }
        keptAtFailure.store(keptFrames, ordering: .relaxed)
        failed.store(true, ordering: .releasing)
        return true
    }
}

/// A take of a running pass whose file refused a write: it is closed with what it holds.
public struct TakeFailure: Sendable, Equatable {
    /// Its place in the pass (the order of the requests).
    public var index: Int
    /// Its request.
    public var request: TakeRequest
    /// Why, in words (the file's error: "the disk is full …").
    public var reason: String
    /// Frames the file holds: everything written before the refused write.
    public var keptFrames: Int64
    /// Whether the disk ran out of room (rather than failing otherwise).
    public var isDiskFull: Bool { reason.contains("disk is full") }

    /// Creates a failure.
    public init(index: Int, request: TakeRequest, reason: String, keptFrames: Int64) {
        self.index = index
        self.request = request
        self.reason = reason
        self.keptFrames = keptFrames
    }

    public static func == (a: TakeFailure, b: TakeFailure) -> Bool { a.index == b.index && a.keptFrames == b.keptFrames }
}

/// A span of a take lost to a full ring: the writer writes silence there.
struct TakeGap: BitwiseCopyable {
    var frame: Int64
    var count: Int64
    /// The span's frames are in the ring but are not to be kept (a cycle JACK handed over too
    /// late to trust): the writer drops ``ringFrames`` of them (the span less what was
    /// dropped from it before it reached the ring) and writes `count` of silence instead.
    var replaces = false
    var ringFrames: Int64 = 0
}

/// The takes of one recording pass: every armed track at once, all starting on the same
/// timeline frame. Built (files opened, markers written, rings allocated) on the control
/// thread; the audio thread fills the rings; the capture writer thread drains them; the
/// control thread closes the files once the pass has ended and everything is written.
public final class TakeSet: @unchecked Sendable {
    let lanes: [TakeLane]
    /// The MIDI tracks' takes (written by the capture writer from the played messages).
    let midiLanes: [MIDITakeLane]
    /// Frames a played message takes to reach the engine (see `RenderCore.midiLatencyFrames`).
    let midiLatencyFrames: Int64
    /// The MIDI takes as closed, once ``Engine/finish(_:)`` has run.
    public internal(set) var midiOutcomes: [MIDITakeOutcome] = []
    /// The lanes without reference counting, for the audio thread.
    let laneTable: UnsafeMutablePointer<Unmanaged<TakeLane>>
    /// When input is kept.
    public let gate: TakeGate

    // Audio thread.
    /// Device frame (as played) where keeping starts; .max until the record point is reached.
    var startDevice: Int64 = .max
    /// Device frame (as played) where keeping ends; .max while open-ended.
    var endDevice: Int64 = .max
    /// Frames the longest take has been given so far (dropped spans included); each lane
    /// counts its own (``TakeLane/kept``): takes of inputs with different latencies reach
    /// their frames at different device times.
    var keptFrames: Int64 = 0

    // Published by the audio thread.
    /// ``startDevice``, for the writer placing MIDI takes.
    let startDeviceFrame = Atomic<Int64>(.max)
    let startedFlag = Atomic<Bool>(false)
    let endedFlag = Atomic<Bool>(false)
    let framesKept = Atomic<Int64>(0)
    /// Lanes whose writes failed (a full disk), mirrors included: once every lane has
    /// (``writableLaneCount``), the audio thread ends the pass, since nothing it keeps could
    /// be written. Writer threads add.
    let failedLanes = Atomic<Int>(0)
    /// The lanes that can be written: the takes and their mirrors.
    let writableLaneCount: Int
    /// The takes' mirror lanes, for the mirror writer (drawn once, here).
    let mirrorLanes: [TakeLane]
    /// The timeline frame where the first kept frame was played (valid once started).
    let recordPointFrame = Atomic<Int64>(0)
    /// When the takes' first frame arrived at the input, CLOCK_MONOTONIC ns (0: not yet; see
    /// ``TakeSet/firstFrameWallClock``).
    let firstFrameNanoseconds = Atomic<Int64>(0)

    init(lanes: [TakeLane], gate: TakeGate, midiLanes: [MIDITakeLane] = [], midiLatencyFrames: Int64 = 0) {
        self.lanes = lanes
        self.midiLanes = midiLanes
        self.midiLatencyFrames = midiLatencyFrames
        self.gate = gate
        mirrorLanes = lanes.compactMap(\.mirror)
        writableLaneCount = lanes.count + mirrorLanes.count
        for lane in lanes {
            lane.latencyFrames = lane.request.latencyFrames ?? gate.latencyFrames
            lane.latencyTarget.store(lane.latencyFrames, ordering: .relaxed)
        }
        laneTable = .allocate(capacity: max(lanes.count, 1))
        for (i, lane) in lanes.enumerated() { (laneTable + i).initialize(to: Unmanaged.passUnretained(lane)) }
    }

    deinit { laneTable.deallocate() }

    /// Whether the record point has been reached (frames are being kept). Any thread.
    public var hasStarted: Bool { startedFlag.load(ordering: .acquiring) }
    /// Whether the pass is over on the audio thread (stopped, punched out, length reached,
    /// the device failed). Any thread.
    public var hasEnded: Bool { endedFlag.load(ordering: .acquiring) }
    /// Frames in each take so far. Any thread.
    public var frameCount: Int64 { framesKept.load(ordering: .acquiring) }
    /// Timeline frame of the takes' first frame (once started). Any thread.
    public var startFrame: Int64 { recordPointFrame.load(ordering: .acquiring) }
    /// Input lost to full rings so far, over all takes. Any thread.
    public var droppedFrames: Int64 { lanes.reduce(0) { $0 + $1.droppedFrames.load(ordering: .relaxed) } }
    /// The first write failure, if any. Any thread.
    public var failure: String? {
        for lane in lanes { if let e = lane.errorText.withLock({ $0 }) { return "\(lane.request.path): \(e)" } }
        return nil
    }
    /// Whether no lane can be written any more (every take's file and every mirror refused a
    /// write): the pass ends. Any thread.
    public var nothingWritable: Bool {
        writableLaneCount > 0 && failedLanes.load(ordering: .acquiring) >= writableLaneCount
    }
    /// Whether take `index` still has a mirror being written (so it goes on when its own
    /// file stopped). Any thread.
    public func hasLiveMirror(_ index: Int) -> Bool {
        guard lanes.indices.contains(index), let m = lanes[index].mirror else { return false }
        return !m.failed.load(ordering: .acquiring)
    }
    /// The mirrors that stopped so far (a full or failing mirror disk, or a file that could
    /// not be created), by their take's index: each file whole up to its kept frames. Any thread.
    public var failedMirrors: [TakeFailure] {
        lanes.enumerated().compactMap { i, lane in
            if let open = lane.mirrorOpenError, let path = lane.request.mirrorPath {
                var r = lane.request
                r.path = path
                return TakeFailure(index: i, request: r, reason: open, keptFrames: 0)
            }
            guard let m = lane.mirror, m.failed.load(ordering: .acquiring) else { return nil }
            return TakeFailure(index: i, request: m.request, reason: m.errorText.withLock { $0 } ?? "",
                               keptFrames: m.keptAtFailure.load(ordering: .relaxed))
        }
    }
    /// The takes whose writes failed so far (a full disk, a failing disk), in lane order:
    /// each file is whole up to ``TakeFailure/keptFrames``. Any thread.
    public var failedTakes: [TakeFailure] {
        lanes.enumerated().compactMap { i, lane in
            guard lane.failed.load(ordering: .acquiring) else { return nil }
            return TakeFailure(index: i, request: lane.request, reason: lane.errorText.withLock { $0 } ?? "",
                               keptFrames: lane.keptAtFailure.load(ordering: .relaxed))
        }
    }
    /// Bytes a second the takes still being written add to the disk. Any thread.
    public var bytesPerSecond: Int64 {
        lanes.reduce(0) { $0 + ($1.failed.load(ordering: .relaxed) ? 0 : $1.bytesPerSecond) }
    }
    /// Whether every frame the audio thread kept has been written (or a lane failed). Any thread.
    public var isWritten: Bool {
        guard hasEnded else { return false }
        func written(_ lane: TakeLane) -> Bool {
            lane.failed.load(ordering: .acquiring)
                || lane.writtenFrames.load(ordering: .acquiring) >= lane.framesKept.load(ordering: .acquiring)
        }
        return lanes.allSatisfy(written) && mirrorLanes.allSatisfy(written)
            && midiLanes.allSatisfy { $0.done.load(ordering: .acquiring) }
    }
    /// The requests, in order.
    public var requests: [TakeRequest] { lanes.map(\.request) }
    /// Take `index`'s waveform as its writer writes it (frame 0 is the take's first frame,
    /// pieces and lost input included), for a front-end to draw while it records. Any thread.
    public func livePeaks(take index: Int) -> LivePeaks? {
        lanes.indices.contains(index) ? lanes[index].live : nil
    }
}
