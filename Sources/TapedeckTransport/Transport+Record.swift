import Foundation
import TapedeckCore
import TapedeckDSP
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// A recording pass under way: its takes and how they go onto the timeline.
struct RecordingPass {
    enum Kind: Equatable {
        /// From the record point on.
        case plain
        /// Only inside this range, punched in with crossfades.
        case punch(FrameRange)
        /// Every pass of this loop, each a take of one group.
        case loop(FrameRange)
    }

    /// One take of the pass.
    struct Take {
        var track: Int
        var trackName: String
        /// Relative to the session folder (nil: a file outside any session).
        var relativeFile: String?
        var path: String
        var peakPath: String?
        var dryPath: String?
        /// Its crash marker: where and how it goes onto its track. The clean stop places it
        /// with the marker's own ``TakeMarker/regions(fileFrames:file:)``, as recovery would.
        var marker: TakeMarker
        /// Frames per piece of a split take (nil: one file); the names above are the first piece's.
        var pieceFrames: Int64?
        /// The take's second copy (``RecordRequest/mirrorFolder``), its first piece's name when split.
        var mirrorPath: String?
        /// The device inputs it records (1-based), and where it is placed from
        /// (``Engine/takeLatency(captureChannels:playing:)``), followed while it records.
        var captureChannels: [Int] = []
        var latency: TakeLatency = .none
    }

    let set: TakeSet
    let kind: Kind
    var takes: [Take]
    /// The MIDI tracks' takes (`.mid` files in `midi/`), in the order of the set's MIDI lanes.
    var midiTakes: [Take] = []
    var tracks: Set<Int> { Set((takes + midiTakes).map(\.track)) }
    let countInFrames: Int64
    let speed: Double
    let stopsWhenDone: Bool
    /// Where the takes are mirrored (``RecordRequest/mirrorFolder``): the MIDI takes are
    /// copied there when they end.
    var mirrorFolder: String? = nil
    /// Stamp the takes with the wall-clock time of their first frame (`--timestamp clock`).
    var stampsClock = false
    /// Whether the first frame's time is in the takes' crash markers (``Transport/noteFirstFrame()``).
    var firstFrameNoted = false
    /// Device xruns and dropped spans told while the pass ran (marked in its takes).
    var incidents: [EngineEvent] = []
}

/// What a recording pass started with, for a front-end to show.
public struct RecordingStart: Sendable {
    /// The take files, in track order.
    public var paths: [String]
    /// Frames the takes are shifted by to line up with what was heard (the first audio take's).
    public var latencyFrames: Int64
    /// Where each audio take is placed from, in track order.
    public var latencies: [TakeLatency] = []
    /// Frames from input to output while monitoring (nil when no recorded track is heard).
    public var monitorLatencyFrames: Int64?
}

extension Transport {
    /// Starts a recording pass on every armed track (or `request.tracks`) at once, each from
    /// its own inputs through its own input chain into its own file, all starting on the same
    /// timeline frame: after the count-in, from the punch's start (only inside the punch
    /// range), or on every pass of the loop (one count-in before the first). While already
    /// rolling straight on, recording starts at once where it is heard. Throws (and records
    /// nothing) when it cannot.
    @discardableResult
    public func record(_ request: RecordRequest) throws -> RecordingStart {
        guard pass == nil else { throw TransportError(.usage, "already recording") }
        reopenIfNeeded()
        if engine.isStarted && !engine.isRunning {
            throw TransportError(.device, "\(deviceName) is not running: \(status.lastError ?? "it stopped")")
        }
        let config = engine.configuration
        let candidates = request.tracks ?? session.tracks.indices.filter { session.tracks[$0].armed }
        let recordsAudio = candidates.contains { session.tracks.indices.contains($0) && !session.tracks[$0].isMIDI }
        guard config.captureChannels > 0 || !recordsAudio else {
            throw TransportError(.device, isOffline ? "no audio device: recording needs one"
                                 : "\(deviceName) has no inputs: recording audio needs one (MIDI tracks record without)")
        }
        if !timePitch.isIdentity && !options.allowsRecordingAtSpeed {
            // A take must line up with what was heard; at another speed or pitch it cannot.
            throw TransportError(.usage, "recording plays at 1.00x without pitch shift: set speed and pitch back first")
        }
        let tracks = request.tracks ?? session.tracks.indices.filter { session.tracks[$0].armed }
        guard !tracks.isEmpty else { throw TransportError(.usage, "no armed track") }
        for t in tracks where !session.tracks.indices.contains(t) {
            throw TransportError(.usage, "track \(t + 1) does not exist (the session has \(session.tracks.count))")
        }
        for t in tracks where session.tracks[t].frozen != nil {
            throw TransportError(.usage, "track \(t + 1) (\(session.tracks[t].name)) is frozen: unfreeze it before recording onto it")
        }
        let midiTracks = tracks.filter { session.tracks[$0].isMIDI }
        if !midiTracks.isEmpty && request.outputPath != nil {
            throw TransportError(.usage, "a MIDI track records into its session's midi/ folder, not into --out")
        }
        if request.outputPath == nil {
            guard let folder, folder.exists else {
                throw TransportError(.usage, "save the session first: takes are written into its audio/ folder")
            }
        }

        // The recorded tracks listen (with this pass's overrides) before anything rolls.
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

        // Where it rolls from and what the takes keep.
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

        // The files, each with its crash marker and what it says about itself.
        var takes: [RecordingPass.Take] = []
        var requests: [TakeRequest] = []
        let names = folder.map { TakeFiles.freshNames(in: $0, tracks: audioTracks, container: options.takeContainer, mirror: request.mirrorFolder) } ?? []
        let midiNames = folder.map { TakeFiles.freshMIDINames(in: $0, tracks: midiTracks) } ?? []
        // The names are claimed by their markers: a pass that never starts leaves no claim.
        func dropClaims() {
            guard let folder else { return }
            for name in names where access(folder.audioFolder + "/" + name, F_OK) != 0 {
                TakeMarker.remove(forAudio: folder.audioFolder + "/" + name)
            }
            for name in midiNames where access(folder.midiFolder + "/" + name, F_OK) != 0 {
                TakeMarker.remove(forAudio: folder.midiFolder + "/" + name)
            }
        }
        let placement: TakeMarker.Placement
        switch kind {
        case .plain: placement = .plain
        case .punch(let r): placement = .punch(range: r, crossfadeFrames: session.punchCrossfadeFrames)
        case .loop(let l): placement = .loopPasses(loop: l)
        }
        var midiTakes: [RecordingPass.Take] = []
        var midiRequests: [MIDITakeRequest] = []
        for (k, t) in midiTracks.enumerated() {
            guard let folder else { break }
            let relative = "midi/" + midiNames[k]
            let markerStart: Int64
            if case .loop(let l) = kind { markerStart = l.startFrame } else { markerStart = recordPoint }
            let marker = TakeMarker(file: relative, session: folder.path, trackIndex: t, trackName: session.tracks[t].name,
                                    timelineStartFrame: markerStart, latencyFrames: 0, sampleRate: config.sampleRate,
                                    deviceChannels: [], startedAtSeconds: Date().timeIntervalSince1970, placement: placement)
            let take = RecordingPass.Take(track: t, trackName: session.tracks[t].name, relativeFile: relative,
                                          path: folder.absolutePath(of: relative), marker: marker)
            midiTakes.append(take)
            midiRequests.append(MIDITakeRequest(track: t, path: take.path, marker: marker, tempoMap: session.tempoMap,
                                                trackName: session.tracks[t].name, speed: timePitch.speed))
        }
        for (k, t) in audioTracks.enumerated() {
            let input = spec.tracks[t].input
            let channels = input?.deviceChannels ?? [1]
            var take: RecordingPass.Take
            let trackName = session.tracks[t].name
            // The engine's gate drops the round trip: every take starts at its record point
            // (a loop take at the loop's start), so the marker's latency is 0.
            let markerStart: Int64
            if case .loop(let l) = kind { markerStart = l.startFrame } else { markerStart = recordPoint }
            func marker(file: String, inSession: Bool) -> TakeMarker {
                var m = TakeMarker(file: file, session: inSession ? folder?.path : nil, trackIndex: inSession ? t : nil,
                                   trackName: inSession ? trackName : nil, timelineStartFrame: markerStart, latencyFrames: 0,
                                   sampleRate: config.sampleRate, deviceChannels: channels,
                                   startedAtSeconds: Date().timeIntervalSince1970, placement: placement,
                                   recordedSpeed: timePitch.speed)
                if request.keepsDryCopy { m.dryFile = TakeFiles.dryPath(for: file) }
                return m
            }
            let takeChannels = max(1, min(channels.count, 2))
            let pieceFrames = request.split?.framesPerPiece(sampleRate: config.sampleRate, channels: takeChannels,
                                                            encoding: options.takeEncoding)
            // A split take's names are its first piece's (`X-001.wav`); the writer names the next.
            func named(_ name: String) -> String { pieceFrames == nil ? name : TakePieces.firstPieceName(name) }
            if let given = request.outputPath, tracks.count == 1 {
                let out = named(given)
                let absolute = out.hasPrefix("/") ? out : FileManager.default.currentDirectoryPath + "/" + out
                take = RecordingPass.Take(track: t, trackName: trackName, relativeFile: nil, path: out,
                                          marker: marker(file: absolute, inSession: false))
            } else if let folder {
                let relative = "audio/" + named(names[k])
                take = RecordingPass.Take(track: t, trackName: trackName, relativeFile: relative,
                                          path: folder.absolutePath(of: relative), peakPath: folder.peakPath(forAudio: relative),
                                          marker: marker(file: relative, inSession: true))
            } else {
                throw TransportError(.usage, "give one file for a take outside a session")
            }
            if request.keepsDryCopy { take.dryPath = TakeFiles.dryPath(for: take.path) }
            take.captureChannels = channels
            take.latency = latencies[k]
            var r = TakeRequest(track: t, channelCount: takeChannels, path: take.path,
                                container: options.takeContainer, encoding: options.takeEncoding, peakPath: take.peakPath,
                                marker: take.marker)
            r.latencyFrames = take.latency.totalFrames
            r.metadata = TakeFiles.metadata(folder: take.relativeFile == nil ? nil : folder, session: session,
                                            trackIndex: take.relativeFile == nil ? nil : t, device: config.name,
                                            deviceChannels: channels, timelineFrame: recordPoint, latency: take.latency,
                                            speed: timePitch.speed, inputChain: input?.chain.text ?? "")
            // Known only once the first frame is in: a placeholder as long as any, replaced on close.
            if options.stampsTakesWithClock { r.metadata?.timeReference = TakeFilePatch.placeholderTimeReference }
            r.dryPath = take.dryPath
            r.recordsDry = request.recordsDry
            r.splitFrames = pieceFrames
            take.pieceFrames = pieceFrames
            if let mirror = request.mirrorFolder {
                do { take.mirrorPath = try mirrorPath(for: take.path, in: mirror) } catch {
                    dropClaims()
                    recordingTracks = []
                    throw error
                }
                r.mirrorPath = take.mirrorPath
            }
            requests.append(r)
            takes.append(take)
        }

        // The click, the route, then roll.
        let until = countIn > 0 && clickMode == .off ? recordPoint : nil
        engine.setClick(on: clickMode != .off || countIn > 0, recordingOnly: clickMode == .recording, untilFrame: until,
                        levelDecibels: clickLevelDecibels, countIn: countIn > 0 ? (leadsInto - countIn)..<leadsInto : nil)
        // A count-in from before JACK's frame 0 runs on the engine's own clock, from a whole
        // number of periods before 0 (so that it reaches 0 on a period's edge), and JACK's
        // transport joins it at 0.
        let preRolls = !onTheFly && engine.followsHost && transportStart < 0
        let period = Int64(max(engine.hostCycleFrames, config.periodFrames, 1))
        let preRollStart = -((-transportStart + period - 1) / period) * period
        if !onTheFly {
            if rolling { engine.stop() }
            // Already there (a command line starts the transport where its take begins): no
            // seek, so the first period rolls.
            if !preRolls && (rolling || engine.followsHost || status.positionFrame != transportStart) {
                engine.locate(to: transportStart)
            }
        }
        switch kind {
        case .loop(let l): engine.setLoop(l, enabled: true)
        case .punch, .plain: engine.setLoop(loop, enabled: false)
        }
        let set: TakeSet
        do { set = try engine.startTakes(requests, gate: gate, midi: midiRequests) } catch {
            dropClaims()
            recordingTracks = []
            engine.setLoop(loop, enabled: loopEnabled)
            throw TransportError(.file, "cannot record: \(error)")
        }
        // A split take's pieces carry their own markers: the claim on the take's own name
        // (which no file will have) goes.
        if let folder, request.split != nil {
            for name in names { TakeMarker.remove(forAudio: folder.audioFolder + "/" + name) }
        }
        engine.setEndFrame(nil)
        if !onTheFly && options.waitsForTimePitchToStart { engine.waitForTimePitch() }
        if preRolls {
            engine.play(from: preRollStart, joiningHostAt: 0)
        } else if !onTheFly {
            engine.play()
        }
        _ = engine.waitUntilApplied(timeoutSeconds: 0.5)
        saidFailedTakes = []
        saidFailedMirrors = []
        warnedDiskSeconds = .infinity
        pass = RecordingPass(set: set, kind: kind, takes: takes, midiTakes: midiTakes, countInFrames: countIn, speed: timePitch.speed,
                             stopsWhenDone: request.stopsWhenDone, mirrorFolder: request.mirrorFolder)
        pass?.stampsClock = options.stampsTakesWithClock
        var monitorLatency: Int64?
        let device = engine.device.latency
        for t in tracks where (spec.tracks[t].input?.monitoring ?? .off) != .off {
            let frames = device.capture(channels: spec.tracks[t].input?.deviceChannels ?? [1]) + device.playback(channels: [1, 2])
                + Int64(engine.inputLatencyFrames(track: t))
            monitorLatency = max(monitorLatency ?? 0, frames)
        }
        if let frames = monitorLatency {
            let ms = Double(frames) * 1000 / Double(config.sampleRate)
            notices.append("monitoring: \(frames) frames (\(String(format: "%.1f", ms)) ms) from input to output")
        }
        var start = RecordingStart(paths: (takes + midiTakes).map(\.path), latencyFrames: takes.first?.latency.totalFrames ?? gate.latencyFrames,
                                   monitorLatencyFrames: monitorLatency)
        start.latencies = takes.map(\.latency)
        return start
    }
}

