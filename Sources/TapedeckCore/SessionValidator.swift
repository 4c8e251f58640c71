/// Checks a decoded session for values JSON types cannot rule out; names the first bad field.
///
/// Every number is checked against ``SessionLimits`` before any sum is taken, so a session
/// that passes can be played, drawn and exported with plain `Int64` arithmetic.
public enum SessionValidator {
    /// The first problem in `session` as `field.path: reason`, or nil when it is valid.
    public static func problem(in session: Session) -> String? {
        if session.sampleRate < 1000 || session.sampleRate > 768_000 {
            return "sampleRate: \(session.sampleRate) is not a usable rate (1000...768000)"
        }
        if !(session.tempoBPM >= 1 && session.tempoBPM <= 999) {
            return "tempoBPM: \(session.tempoBPM) is outside 1...999"
        }
        let sig = session.timeSignature
        if sig.beatsPerBar < 1 || sig.beatsPerBar > 64 { return "timeSignature.beatsPerBar: \(sig.beatsPerBar) is outside 1...64" }
        if ![1, 2, 4, 8, 16, 32].contains(sig.beatUnit) { return "timeSignature.beatUnit: \(sig.beatUnit) is not 1, 2, 4, 8, 16 or 32" }
        if session.tempoChanges.count + session.meterChanges.count > SessionLimits.maximumMarkers {
            return "tempoChanges: \(session.tempoChanges.count + session.meterChanges.count) tempo and meter changes, at most \(SessionLimits.maximumMarkers)"
        }
        if let p = session.tempoMap.problem { return "tempoChanges: \(p)" }
        let limits = Limits(sampleRate: session.sampleRate)
        if session.markers.count > SessionLimits.maximumMarkers {
            return "markers: \(session.markers.count) markers, at most \(SessionLimits.maximumMarkers)"
        }
        for (i, m) in session.markers.enumerated() {
            if let p = limits.position(m.frame, "markers[\(i)].frame") { return p }
            if let p = nameProblem(m.name, "markers[\(i)].name") { return p }
        }
        if let o = session.timeOfDayOrigin, o < 0 || o >= TimeOfDay.framesPerDay(sampleRate: session.sampleRate) {
            return "timeOfDayOrigin: \(o) is not a time of day (0 up to a day of frames at \(session.sampleRate) Hz)"
        }
        if let p = rangeProblem(session.loopRange, "loopRange", limits) { return p }
        if let p = rangeProblem(session.punchRange, "punchRange", limits) { return p }
        if session.masterChain.count > SessionLimits.maximumChainLength {
            return "masterChain: \(session.masterChain.count) characters, at most \(SessionLimits.maximumChainLength)"
        }
        if session.tracks.count > SessionLimits.maximumTracks {
            return "tracks: \(session.tracks.count) tracks, at most \(SessionLimits.maximumTracks)"
        }
        let regionCount = session.tracks.reduce(0) { $0 + $1.regions.count }
        if regionCount > SessionLimits.maximumRegions {
            return "tracks: \(regionCount) regions in all, at most \(SessionLimits.maximumRegions)"
        }
        if let p = gainProblem(session.masterGainDecibels, "masterGainDecibels") { return p }
        for (t, track) in session.tracks.enumerated() {
            if let p = trackProblem(track, at: "tracks[\(t)]", limits) { return p }
        }
        let pointCount = session.tracks.reduce(0) { $0 + $1.automation.reduce(0) { $0 + $1.points.count } }
        if pointCount > SessionLimits.maximumAutomationPoints {
            return "tracks: \(pointCount) automation points in all, at most \(SessionLimits.maximumAutomationPoints)"
        }
        if let p = session.routingProblem() { return "routing: " + p }
        if session.midiBindings.count > SessionLimits.maximumMIDIBindings {
            return "midiBindings: \(session.midiBindings.count) bindings, at most \(SessionLimits.maximumMIDIBindings)"
        }
        for (i, binding) in session.midiBindings.enumerated() {
            if let p = bindingProblem(binding, at: "midiBindings[\(i)]") { return p }
        }
        return nil
    }

    /// Controller 0…127, channel 1…16, and what a kind needs: a track (all but master), a node
    /// (1-based) and a parameter id (parameter).
    private static func bindingProblem(_ b: MIDIBinding, at field: String) -> String? {
        if !(0...127).contains(b.controller) { return "\(field).controller: \(b.controller) is outside 0...127" }
        if let c = b.channel, !(1...16).contains(c) { return "\(field).channel: \(c) is outside 1...16" }
        if b.kind != .master && (b.track ?? "").isEmpty { return "\(field).track: missing (a \(b.kind.rawValue) binding names its track)" }
        if let name = b.track, let p = nameProblem(name, "\(field).track") { return p }
        if b.kind == .parameter {
            guard let n = b.node, n >= 1, n <= 10_000 else { return "\(field).node: missing or not 1...10000 (the node's place in the chain)" }
            guard let id = b.parameter, !id.isEmpty, id.count <= 200 else { return "\(field).parameter: missing (the parameter's id, e.g. cutoff)" }
        }
        return nil
    }

    /// Why `file` may not name a region's audio: it must be a relative path inside the session
    /// folder (no `..`, not absolute), or nil when it may. The folder itself checks links.
    public static func filePathProblem(_ file: String) -> String? {
        if file.isEmpty { return "empty" }
        if file.count > SessionLimits.maximumPathLength { return "longer than \(SessionLimits.maximumPathLength) characters" }
        if file.hasPrefix("/") { return "'\(file.terminalSafe)' is an absolute path; region files must lie inside the session folder (e.g. audio/take.wav)" }
        if file.unicodeScalars.contains("\0") { return "contains a NUL character" }
        let parts = file.split(separator: "/", omittingEmptySubsequences: true)
        if parts.contains("..") { return "'\(file.terminalSafe)' leaves the session folder (..); region files must lie inside it" }
        if parts.isEmpty || parts.allSatisfy({ $0 == "." }) { return "'\(file.terminalSafe)' names the session folder, not a file" }
        return nil
    }

    /// Lanes within the limits, one per parameter, every point on the timeline with a value
    /// its parameter can take.
    private static func automationProblem(_ track: Track, at: String, _ limits: Limits) -> String? {
        if track.automation.count > SessionLimits.maximumAutomationLanes {
            return "\(at).automation: \(track.automation.count) lanes, at most \(SessionLimits.maximumAutomationLanes)"
        }
        var seen = Set<String>()
        for (l, lane) in track.automation.enumerated() {
            let field = "\(at).automation[\(l)]"
            if !seen.insert(lane.parameter.description.lowercased()).inserted { return "\(field): a second lane for \(lane.parameter)" }
            // The messages are built only for a point that fails: a million points must check
            // in milliseconds.
            let gains = SessionLimits.gainDecibelsRange
            for (k, point) in lane.points.enumerated() {
                let v = point.value
                let frameOK = point.frame >= 0 && point.frame <= SessionLimits.maximumTimelineFrames
                let valueOK: Bool
                switch lane.parameter {
                case .gain, .send: valueOK = v.isFinite && gains.contains(v)
                case .pan: valueOK = v >= -1 && v <= 1
                case .mute: valueOK = v >= 0 && v <= 1
                case .node: valueOK = v.isFinite
                }
                if frameOK && valueOK { continue }
                if point.frame < 0 { return "\(field).points[\(k)]: frame \(point.frame) is negative" }
                if let p = limits.position(point.frame, "\(field).points[\(k)].frame") { return p }
                switch lane.parameter {
                case .gain, .send: if let p = gainProblem(v, "\(field).points[\(k)].value") { return p }
                case .pan: return "\(field).points[\(k)].value: pan \(v) is outside -1...1"
                case .mute: return "\(field).points[\(k)].value: mute \(v) is not 0 or 1"
                case .node: return "\(field).points[\(k)].value: \(v) is not a number"
                }
            }
        }
        return nil
    }

    private static func trackProblem(_ track: Track, at: String, _ limits: Limits) -> String? {
        if let p = nameProblem(track.name, "\(at).name") { return p }
        if track.inputChannels.count > SessionLimits.maximumInputChannels {
            return "\(at).inputChannels: \(track.inputChannels.count) channels, at most \(SessionLimits.maximumInputChannels)"
        }
        if track.inputChannels.contains(where: { $0 < 1 || $0 > SessionLimits.maximumInputChannels }) {
            return "\(at).inputChannels: channels are 1...\(SessionLimits.maximumInputChannels)"
        }
        if let p = gainProblem(track.gainDecibels, "\(at).gainDecibels") { return p }
        if !(track.pan >= -1 && track.pan <= 1) { return "\(at).pan: \(track.pan) is outside -1...1" }
        for (s, send) in track.sends.enumerated() {
            if let p = nameProblem(send.bus, "\(at).sends[\(s)].bus") { return p }
            if let p = gainProblem(send.levelDecibels, "\(at).sends[\(s)].levelDecibels") { return p }
            if !(send.pan >= -1 && send.pan <= 1) { return "\(at).sends[\(s)].pan: \(send.pan) is outside -1...1" }
        }
        if let c = track.busChannels, c != 1 && c != 2 { return "\(at).busChannels: \(c) is not 1 or 2" }
        if let p = automationProblem(track, at: at, limits) { return p }
        if track.isBus && (track.armed || track.isMIDI) { return "\(at): a bus is never armed and holds no MIDI" }
        for (name, chain) in [("inputChain", track.inputChain), ("playbackChain", track.playbackChain)]
        where chain.count > SessionLimits.maximumChainLength {
            return "\(at).\(name): \(chain.count) characters, at most \(SessionLimits.maximumChainLength)"
        }
        for (r, region) in track.regions.enumerated() {
            if let p = regionProblem(region, at: "\(at).regions[\(r)]", limits) { return p }
        }
        if let frozen = track.frozen {
            if let p = filePathProblem(frozen.file) { return "\(at).frozen.file: \(p)" }
            if frozen.lengthFrames <= 0 { return "\(at).frozen.lengthFrames: \(frozen.lengthFrames) must be positive" }
            if let p = limits.position(frozen.lengthFrames, "\(at).frozen.lengthFrames") { return p }
        }
        var seen = Set<[Int]>()
        for (r, region) in track.regions.enumerated() {
            guard let g = region.takeGroup, let n = region.takeNumber else { continue }
            if !seen.insert([g, n]).inserted { return "\(at).regions[\(r)].takeNumber: take \(n) of group \(g) appears twice" }
        }
        if track.activeTakes.count > SessionLimits.maximumRegions {
            return "\(at).activeTakes: \(track.activeTakes.count) entries, at most \(SessionLimits.maximumRegions)"
        }
        for (i, choice) in track.activeTakes.enumerated() {
            if let p = takeNumberProblem(choice.group, "\(at).activeTakes[\(i)].group") { return p }
            if let p = takeNumberProblem(choice.take, "\(at).activeTakes[\(i)].take") { return p }
        }
        return nil
    }

    private static func regionProblem(_ region: Region, at rt: String, _ limits: Limits) -> String? {
        if let p = filePathProblem(region.file) { return "\(rt).file: \(p)" }
        if region.timelineStartFrame < 0 { return "\(rt).timelineStartFrame: \(region.timelineStartFrame) is negative" }
        if let p = limits.position(region.timelineStartFrame, "\(rt).timelineStartFrame") { return p }
        if region.sourceOffsetFrame < 0 { return "\(rt).sourceOffsetFrame: \(region.sourceOffsetFrame) is negative" }
        if let p = limits.position(region.sourceOffsetFrame, "\(rt).sourceOffsetFrame") { return p }
        if region.lengthFrames <= 0 { return "\(rt).lengthFrames: \(region.lengthFrames) must be positive" }
        // Both are at most 2^40 here, so the sum cannot overflow.
        if let p = limits.position(region.timelineStartFrame + region.lengthFrames, "\(rt).lengthFrames",
                                   what: "the region ends at frame \(region.timelineStartFrame + region.lengthFrames)") { return p }
        if let p = gainProblem(region.gainDecibels, "\(rt).gainDecibels") { return p }
        if region.fadeInFrames < 0 || region.fadeInFrames > region.lengthFrames { return "\(rt).fadeInFrames: \(region.fadeInFrames) must be 0...lengthFrames" }
        if region.fadeOutFrames < 0 || region.fadeOutFrames > region.lengthFrames { return "\(rt).fadeOutFrames: \(region.fadeOutFrames) must be 0...lengthFrames" }
        if !(region.rate >= 1.0 / 32 && region.rate <= 32) { return "\(rt).rate: \(region.rate) is outside 1/32...32" }
        if region.isMIDI {
            let lower = region.file.lowercased()
            if !(lower.hasSuffix(".mid") || lower.hasSuffix(".midi")) { return "\(rt).file: a MIDI region's file is a .mid file" }
            if region.rate != 1 { return "\(rt).rate: a MIDI region plays at rate 1 (its notes are moved instead)" }
        }
        return takeProblem(region, at: rt)
    }

    /// Take fields come in pairs, and a recorded speed is a usable transport speed.
    private static func takeProblem(_ region: Region, at rt: String) -> String? {
        if region.takeGroup != nil && region.takeNumber == nil { return "\(rt).takeNumber: missing (the region has a takeGroup)" }
        if region.takeGroup == nil && region.takeNumber != nil { return "\(rt).takeGroup: missing (the region has a takeNumber)" }
        if let g = region.takeGroup, let p = takeNumberProblem(g, "\(rt).takeGroup") { return p }
        if let n = region.takeNumber, let p = takeNumberProblem(n, "\(rt).takeNumber") { return p }
        if let v = region.recordedSpeed, !(v >= 1.0 / 32 && v <= 32) { return "\(rt).recordedSpeed: \(v) is outside 1/32...32" }
        return nil
    }

    private static func takeNumberProblem(_ n: Int, _ field: String) -> String? {
        if n < 1 { return "\(field): \(n) must be 1 or more" }
        if n > SessionLimits.maximumTakeNumber { return "\(field): \(n) is above the limit of \(SessionLimits.maximumTakeNumber)" }
        return nil
    }

    private static func gainProblem(_ gain: Double, _ field: String) -> String? {
        let range = SessionLimits.gainDecibelsRange
        guard gain.isFinite, range.contains(gain) else {
            return "\(field): \(gain) is not a gain (\(Int(range.lowerBound))...+\(Int(range.upperBound)) dB)"
        }
        return nil
    }

    private static func nameProblem(_ name: String, _ field: String) -> String? {
        name.count > SessionLimits.maximumNameLength
            ? "\(field): \(name.count) characters, at most \(SessionLimits.maximumNameLength)" : nil
    }

    private static func rangeProblem(_ range: FrameRange?, _ name: String, _ limits: Limits) -> String? {
        guard let r = range else { return nil }
        if r.startFrame < 0 { return "\(name).startFrame: \(r.startFrame) is negative" }
        if let p = limits.position(r.startFrame, "\(name).startFrame") { return p }
        if let p = limits.position(r.endFrame, "\(name).endFrame") { return p }
        if r.endFrame <= r.startFrame { return "\(name).endFrame: \(r.endFrame) must be after startFrame \(r.startFrame)" }
        return nil
    }

    /// The timeline limit, with its wording at one session's rate.
    private struct Limits {
        let sampleRate: Int

        func position(_ frame: Int64, _ field: String, what: String? = nil) -> String? {
            if frame < 0 { return "\(field): \(frame) is negative" }
            guard frame > SessionLimits.maximumTimelineFrames else { return nil }
            return "\(field): \(what ?? "\(frame)") is past the end of the timeline (at most \(SessionLimits.timelineLimitText(sampleRate: sampleRate)))"
        }
    }
}
