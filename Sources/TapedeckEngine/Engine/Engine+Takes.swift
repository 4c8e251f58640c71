import Foundation
import TapedeckCore
import TapedeckIO
import TapedeckTakes

/// Recording passes: opening every take's file, starting and ending a pass on the audio
/// thread, and finishing the files once the capture writer has written the last frames.
extension Engine {

    /// Where a take of device inputs `captureChannels` (1-based) lands: the one latency model
    /// (``TakeLatency``) — what the device reports now for those inputs and for the master's
    /// outputs (1 and 2, what the performer hears), the residual `calibrate` stored for it,
    /// and the graph's output latency (the master chain's look-ahead and the slowest path
    /// into the master, ``RouteTable``). `playing`: whether the session plays meanwhile
    /// (when not, nothing is there to line up with). Control thread.
    public func takeLatency(captureChannels: [Int], playing: Bool) -> TakeLatency {
        let report = device.latency
        return TakeLatency(backend: report.backend, captureFrames: report.capture(channels: captureChannels),
                           playbackFrames: report.playback(channels: [1, 2]), residualFrames: options.latencyOffsetFrames,
                           outputFrames: Int64(graphs.last?.outputLatencyFrames ?? 0), playing: playing)
    }

    /// The round trip in use for the first input, as ``takeLatency(captureChannels:playing:)``
    /// places a take of it while the session plays.
    public var overdubLatencyFrames: Int64 { takeLatency(captureChannels: [1], playing: true).totalFrames }

    /// Moves take `index` of `set` to a new latency from the next period on (a port patched
    /// while it records): its later frames are read that much after what was played. Frames
    /// outside 0…10 min are held there. Control thread.
    public func setTakeLatency(_ set: TakeSet, index: Int, frames: Int64) {
        guard set.lanes.indices.contains(index) else { return }
        let limit = Int64(configuration.sampleRate) * 600
        set.lanes[index].latencyTarget.store(min(max(frames, 0), limit), ordering: .relaxed)
    }

    /// The latency take `index` of `set` is read with now (the audio thread's last word).
    /// Any thread.
    public func takeLatencyTarget(_ set: TakeSet, index: Int) -> Int64? {
        guard set.lanes.indices.contains(index) else { return nil }
        return set.lanes[index].latencyTarget.load(ordering: .relaxed)
    }

    /// The newest graph's delay compensation: each strip's output delay and the total.
    public var delayCompensation: DelayCompensation? { graphs.last?.routes.compensation }

    /// Frames the master's output lags the timeline (delay compensation included).
    public var outputLatencyFrames: Int { graphs.last?.outputLatencyFrames ?? 0 }

    /// Frames the input chain of `track` delays its input.
    public func inputLatencyFrames(track: Int) -> Int {
        guard let g = graphs.last, g.strips.indices.contains(track), g.inputForTrack[track] >= 0 else { return 0 }
        return g.inputs[g.inputForTrack[track]].latencyFrames
    }

    /// Opens every take's file (after its crash marker) and starts a recording pass: from
    /// the gate's record point each take keeps its track's input. All or none: when one file
    /// cannot be created the others are removed again and the error thrown.
    public func startTakes(_ requests: [TakeRequest], gate: TakeGate, midi midiRequests: [MIDITakeRequest] = []) throws -> TakeSet {
        var lanes: [TakeLane] = []
        var midiLanes: [MIDITakeLane] = []
        let ringFrames = Int(options.captureRingSeconds * Double(configuration.sampleRate)) + configuration.periodFrames
        do {
            for r in requests {
                lanes.append(try TakeLane(request: r, ringFrames: ringFrames, blockFrames: options.diskBlockFrames,
                                          sampleRate: configuration.sampleRate))
            }
            for r in midiRequests { midiLanes.append(try MIDITakeLane(request: r)) }
        } catch {
            for lane in lanes { Engine.discard(lane) }
            for lane in midiLanes { Engine.discard(lane) }
            throw error
        }
        let set = TakeSet(lanes: lanes, gate: gate, midiLanes: midiLanes, midiLatencyFrames: midiLatencyFrames)
        if !midiLanes.isEmpty { core.midi.capturing.store(true, ordering: .releasing) }
        takeSets.append(set)
        writer.add(set)
        guard send(.startTakes(Unmanaged.passUnretained(set).toOpaque(), serial: nextSerial())) else {
            // Never started: nothing will write these files, so none is left behind.
            writer.remove(set)
            takeSets.removeAll { $0 === set }
            for lane in lanes { Engine.discard(lane) }
            for lane in midiLanes { Engine.discard(lane) }
            if !takeSets.contains(where: { !$0.midiLanes.isEmpty }) { core.midi.capturing.store(false, ordering: .releasing) }
            throw DeviceError(device: configuration.name, reason: drainRefusals() ?? "the engine did not take the start of recording")
        }
        return set
    }

    /// Ends the running pass (the transport may roll on).
    public func endTakes() { send(.endTakes(serial: nextSerial())) }

    /// Closes the takes of an ended pass once everything is written: final headers, peak
    /// files. Waits for the writer (which keeps up unless the disk is failing). Control thread.
    public func finish(_ set: TakeSet) -> [TakeOutcome] {
        guard takeSets.contains(where: { $0 === set }) else { return [] }
        let deadline = monotonicNanoseconds() + 30_000_000_000
        while !set.isWritten && monotonicNanoseconds() < deadline {
            writer.signal()
            usleep(2000)
        }
        writer.remove(set)
        takeSets.removeAll { $0 === set }
        if !takeSets.contains(where: { !$0.midiLanes.isEmpty }) { core.midi.capturing.store(false, ordering: .releasing) }
        set.midiOutcomes = set.midiLanes.map { lane in
            var problem = lane.errorText.withLock { $0 }
            if !lane.done.load(ordering: .acquiring) && problem == nil { problem = "the MIDI take was not finished in 30 s" }
            return MIDITakeOutcome(request: lane.request, frameCount: lane.lengthFrames.load(ordering: .acquiring),
                                   eventCount: lane.keptEvents.load(ordering: .relaxed), error: problem)
        }
        return set.lanes.map { lane in
            var problem = lane.errorText.withLock { $0 }
            if !set.isWritten && problem == nil { problem = "the disk did not take the last frames in 30 s" }
            do { try lane.writer.close() } catch { problem = problem ?? "\(error)" }
            if let dry = lane.dryWriter { do { try dry.close() } catch { problem = problem ?? "\(error)" } }
            // What the file holds: all that was kept, or up to a write that failed.
            let frames = lane.failed.load(ordering: .acquiring) ? lane.framesInFiles : lane.writtenFrames.load(ordering: .acquiring)
            var outcome = TakeOutcome(request: lane.request, frameCount: frames,
                                      droppedFrames: lane.droppedFrames.load(ordering: .relaxed), error: problem,
                                      pieceCount: lane.pieceIndex + 1)
            outcome.mirror = mirrorOutcome(lane, keptFrames: set.frameCount)
            return outcome
        }
    }

    /// Closes `lane`'s mirror and says what it holds of the `keptFrames` the pass kept (nil:
    /// the take has no mirror).
    private func mirrorOutcome(_ lane: TakeLane, keptFrames: Int64) -> MirrorOutcome? {
        guard let path = lane.request.mirrorPath else { return nil }
        guard let m = lane.mirror else {
            return MirrorOutcome(path: path, frameCount: 0, droppedFrames: 0, error: lane.mirrorOpenError, pieceCount: 0)
        }
        var problem = m.errorText.withLock { $0 }
        // Its own count, not the pass's: a take whose disk lagged is not the mirror's fault.
        let written = m.failed.load(ordering: .acquiring) || m.writtenFrames.load(ordering: .acquiring) >= keptFrames
        if !written && problem == nil { problem = "the mirror's disk did not take the last frames in 30 s" }
        do { try m.writer.close() } catch { problem = problem ?? "\(error)" }
        let frames = m.failed.load(ordering: .acquiring) ? m.framesInFiles : m.writtenFrames.load(ordering: .acquiring)
        return MirrorOutcome(path: path, frameCount: frames, droppedFrames: m.droppedFrames.load(ordering: .relaxed),
                             error: problem, pieceCount: m.pieceIndex + 1)
    }

    private static func discard(_ lane: MIDITakeLane) {
        unlink(lane.request.path)
        TakeMarker.remove(forAudio: lane.request.path)
    }

    private static func discard(_ lane: TakeLane) {
        if let m = lane.mirror { discard(m) }
        try? lane.writer.close()
        try? lane.dryWriter?.close()
        unlink(lane.request.path)
        if let dry = lane.request.dryPath { unlink(dry) }
        if let peak = lane.request.peakPath { unlink(peak) }
        TakeMarker.remove(forAudio: lane.request.path)
    }
}
