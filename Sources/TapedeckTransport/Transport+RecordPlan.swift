import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// How a recording pass will run, worked out before any file is made or anything rolls.
struct RecordPlan {
    /// The request, with the standing settings (the screen's `--split` and `--mirror`) applied.
    var request: RecordRequest
    /// The recorded tracks, and of them the audio and the MIDI ones.
    var tracks: [Int]
    var audioTracks: [Int]
    var midiTracks: [Int]
    var kind: RecordingPass.Kind
    /// What the takes keep: from where, until where, how much, shifted by how much.
    var gate: TakeGate
    var countIn: Int64
    /// The bar the count-in leads into.
    var leadsInto: Int64
    /// Where the transport rolls from (the count-in before the record point).
    var transportStart: Int64
    /// The transport was rolling when the pass was asked for.
    var rolling: Bool
    /// Already rolling straight on: recording starts at once where it is heard.
    var onTheFly: Bool
    /// The timeline frame the takes start on.
    var recordPoint: Int64
    /// Where each audio take is placed from, in ``audioTracks`` order.
    var latencies: [TakeLatency]

    /// How the takes go onto their tracks, for their crash markers.
    func placement(punchCrossfadeFrames: Int64) -> TakeMarker.Placement {
        switch kind {
        case .plain: return .plain
        case .punch(let r): return .punch(range: r, crossfadeFrames: punchCrossfadeFrames)
        case .loop(let l): return .loopPasses(loop: l)
        }
    }

    /// Where a take's marker starts: a loop take at the loop's start, else the record point.
    /// (The engine's gate drops the round trip: every take starts there, so the marker's
    /// latency is 0.)
    var markerStart: Int64 {
        if case .loop(let l) = kind { return l.startFrame }
        return recordPoint
    }
}

/// The files of a recording pass, and what the engine is asked to write.
struct RecordFiles {
    var takes: [RecordingPass.Take] = []
    var requests: [TakeRequest] = []
    var midiTakes: [RecordingPass.Take] = []
    var midiRequests: [MIDITakeRequest] = []
    /// The fresh names claimed (by their crash markers) in `audio/` and `midi/`.
    var names: [String] = []
    var midiNames: [String] = []

    /// Drops the claims on names no file was made for: a pass that never starts leaves no claim.
    func dropClaims(in folder: SessionFolder?) {
        guard let folder else { return }
        for name in names where access(folder.audioFolder + "/" + name, F_OK) != 0 {
            TakeMarker.remove(forAudio: folder.audioFolder + "/" + name)
        }
        for name in midiNames where access(folder.midiFolder + "/" + name, F_OK) != 0 {
            TakeMarker.remove(forAudio: folder.midiFolder + "/" + name)
        }
    }
}

extension Transport {
    /// The tracks `request` records (the armed ones unless it names them), each checked: it
    /// exists, is not frozen, and the device and session can take it.
    func tracksToRecord(_ request: RecordRequest) throws -> [Int] {
        let config = engine.configuration
        let tracks = request.tracks ?? session.tracks.indices.filter { session.tracks[$0].armed }
        let recordsAudio = tracks.contains { session.tracks.indices.contains($0) && !session.tracks[$0].isMIDI }
        guard config.captureChannels > 0 || !recordsAudio else {
            throw TransportError(.device, isOffline ? "no audio device: recording needs one"
                                 : "\(deviceName) has no inputs: recording audio needs one (MIDI tracks record without)")
        }
        if !timePitch.isIdentity && !options.allowsRecordingAtSpeed {
            // A take must line up with what was heard; at another speed or pitch it cannot.
            throw TransportError(.usage, "recording plays at 1.00x without pitch shift: set speed and pitch back first")
        }
        guard !tracks.isEmpty else { throw TransportError(.usage, "no armed track") }
        for t in tracks where !session.tracks.indices.contains(t) {
            throw TransportError(.usage, "track \(t + 1) does not exist (the session has \(session.tracks.count))")
        }
        for t in tracks where session.tracks[t].frozen != nil {
            throw TransportError(.usage, "track \(t + 1) (\(session.tracks[t].name)) is frozen: unfreeze it before recording onto it")
        }
        if tracks.contains(where: { session.tracks[$0].isMIDI }) && request.outputPath != nil {
            throw TransportError(.usage, "a MIDI track records into its session's midi/ folder, not into --out")
        }
        if request.outputPath == nil {
            guard let folder, folder.exists else {
                throw TransportError(.usage, "save the session first: takes are written into its audio/ folder")
            }
        }
        return tracks
    }

    /// The recorded tracks listen (with this pass's input overrides) before anything rolls;
    /// each audio track's inputs must be the device's.
    func listen(forRecording tracks: [Int], _ request: RecordRequest) throws {
        let config = engine.configuration
        let previousOverride = inputOverride
        inputOverride = request.inputChain != nil || request.deviceChannels != nil ? (request.inputChain, request.deviceChannels) : nil
        recordingTracks = Set(tracks)
        listening.formUnion(tracks)
        if let problem = rebuild() {
            recordingTracks = []
            inputOverride = previousOverride
            throw TransportError(.file, problem)
        }
        for t in tracks where !session.tracks[t].isMIDI {
            for ch in spec.tracks[t].input?.deviceChannels ?? [] where ch > config.captureChannels {
                recordingTracks = []
                throw TransportError(.device, "track \(t + 1) (\(session.tracks[t].name)) listens to input \(ch), but \(deviceName) has \(config.captureChannels)")
            }
        }
    }

    /// Where the pass rolls from and what its takes keep: plain, punched or looped, the
    /// count-in, the timeline's end, and each take's placement by the one latency model.
    func planPass(_ request: RecordRequest, tracks: [Int]) throws -> RecordPlan {
        let from = request.fromFrame
        // The count-in counts the bars it leads into at their tempo and meter (into bar 17,
        // bar 17's), wherever the map changes before them.
        let leadsInto = loopEnabled && !punchEnabled ? (loop.map { $0.frameCount > 0 ? $0.startFrame : from } ?? from) : from
        let countIn = session.tempoMap.countInFrames(bars: countInBars, into: leadsInto)
        let rolling = status.transport != .stopped
        var kind = RecordingPass.Kind.plain
        var gate = TakeGate(recordPoint: from)
        var transportStart = from - countIn
        if punchEnabled, let p = punch, p.frameCount > 0 {
            guard from < p.endFrame else { throw TransportError(.usage, "the playhead is past the punch range: move it before its end") }
            let point = max(from, p.startFrame)
            kind = .punch(FrameRange(startFrame: point, endFrame: p.endFrame))
            gate = TakeGate(recordPoint: point, endFrame: p.endFrame)
        } else if loopEnabled, let l = loop, l.frameCount > 0 {
            kind = .loop(l)
            gate = TakeGate(recordPoint: l.startFrame)
            transportStart = l.startFrame - countIn
        }
        // The standing settings (the screen's --split and --mirror): a split where the take
        // can be split, a mirror always.
        var request = request
        if request.mirrorFolder == nil { request.mirrorFolder = options.mirrorFolder }
        if request.split == nil, let split = options.split, kind == .plain, timePitch.speed == 1, !request.keepsDryCopy {
            request.split = split
        }
        // The timeline ends at 2^40 frames: a take stops there (what it would hold beyond could
        // never be placed).
        let startPoint = gate.recordPoint ?? status.positionFrame
        let room = SessionLimits.maximumTimelineFrames - startPoint
        guard room > 0 else {
            throw TransportError(.usage, "the record point is at the end of the timeline (\(TimeText.clock(frames: startPoint, sampleRate: session.sampleRate)))")
        }
        let roomFrames = Int64(min(Double(room) / max(timePitch.speed, 1.0 / 64), 0x1p62))
        gate.maxFrames = min(request.maxFrames ?? .max, roomFrames)
        // A pass of MIDI tracks only keeps what was played when it was heard: the MIDI latency.
        // Each audio take is placed by the one latency model for its own inputs; the pass's own
        // figure is the quickest of them (a take started at once starts from what it hears).
        let audioTracks = tracks.filter { !session.tracks[$0].isMIDI }
        let latencies = audioTracks.map { t in
            engine.takeLatency(captureChannels: spec.tracks[t].input?.deviceChannels ?? [1], playing: options.playsSession)
        }
        gate.latencyFrames = audioTracks.isEmpty ? engine.midiLatencyFrames : latencies.map(\.totalFrames).min() ?? 0
        if request.split != nil {
            // A piece is placed at the record point plus its frames: a punch, loop passes or
            // another speed would need each piece cut or scaled, and a dry copy its own pieces.
            if kind != .plain { throw TransportError(.usage, "--split records plain takes: not with a punch or loop recording") }
            if timePitch.speed != 1 { throw TransportError(.usage, "--split records at 1x: not at another speed") }
            if request.keepsDryCopy { throw TransportError(.usage, "--split cannot keep a dry copy (--keep both)") }
        }
        let onTheFly = rolling && kind == .plain && countIn == 0
        if onTheFly { gate.recordPoint = nil }
        let recordPoint = gate.recordPoint ?? max(0, status.positionFrame - gate.latencyFrames)
        return RecordPlan(request: request, tracks: tracks, audioTracks: audioTracks, midiTracks: tracks.filter { session.tracks[$0].isMIDI },
                          kind: kind, gate: gate, countIn: countIn, leadsInto: leadsInto, transportStart: transportStart,
                          rolling: rolling, onTheFly: onTheFly, recordPoint: recordPoint, latencies: latencies)
    }
}
