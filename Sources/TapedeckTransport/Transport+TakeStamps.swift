import Foundation
import TapedeckCore
import TapedeckEngine
import TapedeckIO
import TapedeckTakes

/// What a closed take learns about itself only at the end: the wall-clock time of its first
/// frame (`record --timestamp clock`) and where input was lost (device xruns, frames a slow
/// disk dropped), written into its file(s) and handed to the front-end as timeline markers.
extension Transport {
    /// Keeps the running pass's device xruns and dropped spans, to mark them in its takes.
    func noteIncidents(_ new: [EngineEvent]) {
        guard pass != nil else { return }
        for e in new where e.kind == .deviceXrun || e.kind == .captureDropped || e.kind == .takeLatencyChanged {
            pass?.incidents.append(e)
        }
    }

    /// The pass's incidents, with any the engine told after the last snapshot (a drop
    /// pushed just before the pass ended).
    func passIncidents() -> [EngineEvent] {
        let late = engine.drainEvents()
        events += late
        report(late)
        noteIncidents(late)
        return pass?.incidents ?? []
    }

    /// Once the running pass's first frame is in and its takes are stamped with the wall
    /// clock, writes that time into their crash markers, so `recover` stamps a take a crash
    /// leaves as its close would have (a split take's first piece; later pieces keep the
    /// placeholder).
    func noteFirstFrame() {
        guard let p = pass, p.stampsClock, !p.firstFrameNoted, let wall = p.set.firstFrameWallClock else { return }
        pass?.firstFrameNoted = true
        for take in p.takes {
            var marker = take.marker
            marker.firstFrameWallClock = wall
            try? marker.write(forAudio: take.path)
            // The mirror's own marker, as its writer wrote it.
            if let mirror = take.mirrorPath, var m = try? TakeMarker.read(sidecar: TakeMarker.sidecarPath(forAudio: mirror)) {
                m.firstFrameWallClock = wall
                try? m.write(forAudio: mirror)
            }
        }
    }

    /// Where pass `pass`'s takes go on the timeline: the record point, or, for a plain pass
    /// stamped with the wall clock in a session with a time-of-day origin, the time of its
    /// first frame less the origin (so takes recorded at any time, their split pieces and
    /// their mirror copies all line up with each other and with other recorders' files
    /// imported `--at original`). A take stamped before the origin stays at the record point,
    /// and the line returned says so.
    func placedStart(of pass: RecordingPass) -> (frame: Int64, line: String?) {
        let recorded = pass.set.startFrame
        guard pass.stampsClock, case .plain = pass.kind, let origin = session.timeOfDayOrigin,
              let wall = pass.set.firstFrameWallClock else { return (recorded, nil) }
        let rate = engine.configuration.sampleRate
        let day = TimeOfDay.framesPerDay(sampleRate: rate)
        var reference = TakeFilePatch.timeOfDay(wallClock: wall, sampleRate: rate).reference
        // Recorded past midnight after a session that began the day before.
        if reference < origin && origin - reference > day / 2 { reference += day }
        guard reference >= origin else {
            let clock = TimeText.clock(frames: recorded, sampleRate: rate)
            return (recorded, "the take began at \(TimeOfDay.text(frames: reference, sampleRate: rate)), before the session's time-of-day origin \(TimeOfDay.text(frames: origin, sampleRate: rate)): it stays at the record point \(clock), not at its time of day")
        }
        return (reference - origin, nil)
    }

    /// What a take's file(s) say and where it marks lost input.
    struct TakeStamp {
        /// Timeline markers for the take (xruns, dropped spans).
        var markers: [Marker] = []
        /// The session's time-of-day origin the take implies (its time reference less its
        /// timeline frame), when it is stamped with the wall clock.
        var origin: Int64?
        /// Problems writing them, one line each.
        var problems: [String] = []
    }

    /// Stamps take `k` of `pass` (closed, `frames` long, from timeline frame `start`): the
    /// wall-clock time reference and origination date and time when the pass asked for it,
    /// and cue points (WAV) or chapters (FLAC) where input was lost, in the take, its dry copy
    /// and its mirror copy (`mirrorFrames` long); returns its markers for the timeline.
    func stamp(take: RecordingPass.Take, index k: Int, of pass: RecordingPass, frames: Int64, start: Int64,
               incidents: [EngineEvent], mirrorFrames: Int64? = nil) -> TakeStamp {
        var out = TakeStamp()
        guard frames > 0 else { return out }
        let rate = engine.configuration.sampleRate
        let speed = pass.speed > 0 ? pass.speed : 1
        // A take placed by its time of day: its xruns' timeline frames move with it.
        let timelineShift = start - pass.set.startFrame
        let isLoop: Bool
        if case .loop = pass.kind { isLoop = true } else { isLoop = false }
        let pieceFrames = take.pieceFrames ?? frames
        let pieceCount = Int((frames + pieceFrames - 1) / pieceFrames)
        func piecePath(_ p: Int) -> String { take.pieceFrames == nil ? take.path : TakePieces.name(take.path, piece: p + 1) }
        // The files of piece `p`: the piece, a dry copy beside a take that is not split, and the
        // piece's mirror copy (as long as the mirror got; a mirror that was given up is gone).
        func mirrorPath(_ p: Int) -> String? {
            guard let m = take.mirrorPath else { return nil }
            let path = take.pieceFrames == nil ? m : TakePieces.name(m, piece: p + 1)
            return access(path, F_OK) == 0 ? path : nil
        }
        func files(_ p: Int) -> [String] {
            [piecePath(p)] + (take.pieceFrames == nil ? take.dryPath.map { [$0] } ?? [] : []) + (mirrorPath(p).map { [$0] } ?? [])
        }

        // Lost input: (take frame, timeline frame, name), one per span.
        var lost: [(frame: Int64, timeline: Int64, name: String)] = []
        let several = pass.takes.count > 1
        for e in TakeStamps.merged(incidents.filter { $0.kind == .captureDropped && $0.track == take.track }) {
            guard e.frame >= 0, e.frame < frames else { continue }
            let timeline = isLoop ? -1 : start + Int64((Double(e.frame) * speed).rounded(.down))
            lost.append((e.frame, timeline, "dropped \(e.frames)" + (several ? " (track \(take.track + 1))" : "")))
        }
        // A round trip that changed while it recorded: where the take began following the new one.
        for e in incidents where e.kind == .takeLatencyChanged && e.track == take.track && e.frame >= 0 && e.frame < frames {
            lost.append((e.frame, -1, "latency \(e.previousFrames) → \(e.frames) frames"))
        }
        // An xrun while the transport stood (before the take rolled: ports patched, a buffer
        // size changed, a count-in waiting at 0 for JACK) moved no playhead: the take lost
        // nothing to it, and it marks none.
        let xruns = incidents.filter { $0.kind == .deviceXrun && !$0.whileStopped }
        for e in xruns {
            // A device that tells an xrun before it knows its cost tells the cost again from
            // the same frame: one marker, with the frames.
            if e.frames == 0 && xruns.contains(where: { $0.frame == e.frame && $0.frames > 0 }) { continue }
            var f = Int64((Double(e.frame - pass.set.startFrame) / speed).rounded(.down))
            // A loss that began in the count-in or pre-roll and ran past the record point: the
            // take's first frames are its silence, marked where the take begins.
            let lastLost = Int64((Double(e.frame + e.frames - pass.set.startFrame) / speed).rounded(.up))
            if f < 0 && lastLost > 0 { f = 0 }
            let inTake = !isLoop && f >= 0 && f < frames
            // A loop pass's xrun is marked on the timeline only (its file frame is not one place).
            guard inTake || (isLoop && k == 0) else { continue }
            lost.append((inTake ? f : -1, e.frame + timelineShift, TakeStamps.xrunName(lostFrames: e.frames)))
        }
        lost.sort { ($0.frame, $0.timeline) < ($1.frame, $1.timeline) }
        // The timeline: the session's takes only; a device xrun once per pass (first take).
        if take.relativeFile != nil {
            for l in lost where l.timeline >= 0 && (k == 0 || !l.name.hasPrefix("xrun")) {
                out.markers.append(Marker(name: l.name, frame: l.timeline, kind: .lostInput))
            }
        }
        for p in 0..<pieceCount {
            let from = Int64(p) * pieceFrames
            let length = min(pieceFrames, frames - from)
            let cues = lost.filter { $0.frame >= from && $0.frame < from + length }.map { CuePoint(frame: $0.frame - from, name: $0.name) }
            guard !cues.isEmpty else { continue }
            for path in files(p) {
                // The mirror copy has its own ring: the device's xruns are in it, the take's dropped
                // spans are not (it drops its own, unmarked). One that stopped early holds less.
                var holds = length
                let isMirror = path == mirrorPath(p)
                if isMirror, let m = mirrorFrames { holds = min(length, max(0, m - from)) }
                let inside = cues.filter { $0.frame < holds && (!isMirror || $0.name.hasPrefix("xrun")) }
                guard !inside.isEmpty else { continue }
                do {
                    // WAV: cue points with labels; FLAC: chapter comments, as exports carry them.
                    if options.takeContainer == .wav {
                        try TakeFilePatch.appendCues(path: path, cues: inside, frameCount: holds)
                    } else {
                        try FLACChapters.add(inside, sampleRate: rate, toFileAt: path)
                    }
                } catch {
                    out.problems.append("\(error) (its xruns and dropped spans are not marked in it)")
                }
            }
        }

        guard pass.stampsClock else { return out }
        guard let wall = pass.set.firstFrameWallClock else {
            out.problems.append("\(take.path): the time of its first frame is not known; it keeps no time of day")
            return out
        }
        let first = TakeFilePatch.timeOfDay(wallClock: wall, sampleRate: rate)
        out.origin = first.reference - start >= 0 ? first.reference - start : nil
        let requests = pass.set.requests
        for p in 0..<pieceCount {
            let from = Int64(p) * pieceFrames
            let when = TakeFilePatch.timeOfDay(wallClock: wall + Double(from) / Double(max(rate, 1)), sampleRate: rate)
            var metadata = k < requests.count ? requests[k].metadata ?? TakeMetadata() : TakeMetadata()
            metadata.timelineFrame = start + from
            metadata.timeReference = first.reference + from
            for path in files(p) {
                do { try TakeFilePatch.stampTime(path: path, metadata: metadata, date: when.date, time: when.time) } catch {
                    out.problems.append("\(error.description) (it keeps no time of day)")
                }
            }
        }
        return out
    }
}

/// Helpers for ``Transport/stamp(take:index:of:frames:start:incidents:)``.
enum TakeStamps {
    /// An xrun's marker says what it lost: `xrun: 512 frames lost`, or, when the device lost
    /// no time (a late period it caught up), `xrun: no frames lost`.
    static func xrunName(lostFrames: Int64) -> String {
        lostFrames > 0 ? "xrun: \(lostFrames) frame\(lostFrames == 1 ? "" : "s") lost" : "xrun: no frames lost"
    }

    /// Dropped spans told period by period, joined where one runs on from the other.
    static func merged(_ drops: [EngineEvent]) -> [EngineEvent] {
        var out: [EngineEvent] = []
        for e in drops.sorted(by: { $0.frame < $1.frame }) {
            if var last = out.last, last.frame + last.frames == e.frame {
                last.frames += e.frames
                out[out.count - 1] = last
            } else {
                out.append(e)
            }
        }
        return out
    }
}
