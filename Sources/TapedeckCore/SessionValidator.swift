/// Checks a decoded session for values JSON types cannot rule out; names the first bad field.
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
        for (i, m) in session.markers.enumerated() where m.frame < 0 {
            return "markers[\(i)].frame: \(m.frame) is negative"
        }
        if !session.masterGainDecibels.isFinite || session.masterGainDecibels > 24 {
            return "masterGainDecibels: \(session.masterGainDecibels) is not a gain (at most +24 dB)"
        }
        if let p = rangeProblem(session.loopRange, "loopRange") { return p }
        if let p = rangeProblem(session.punchRange, "punchRange") { return p }
        for (t, track) in session.tracks.enumerated() {
            let at = "tracks[\(t)]"
            if track.inputChannels.contains(where: { $0 < 1 || $0 > 256 }) { return "\(at).inputChannels: channels are 1...256" }
            if !track.gainDecibels.isFinite || track.gainDecibels > 24 { return "\(at).gainDecibels: \(track.gainDecibels) is not a gain (at most +24 dB)" }
            if !(track.pan >= -1 && track.pan <= 1) { return "\(at).pan: \(track.pan) is outside -1...1" }
            for (r, region) in track.regions.enumerated() {
                let rt = "\(at).regions[\(r)]"
                if region.file.isEmpty { return "\(rt).file: empty" }
                if region.timelineStartFrame < 0 { return "\(rt).timelineStartFrame: \(region.timelineStartFrame) is negative" }
                if region.sourceOffsetFrame < 0 { return "\(rt).sourceOffsetFrame: \(region.sourceOffsetFrame) is negative" }
                if region.lengthFrames <= 0 { return "\(rt).lengthFrames: \(region.lengthFrames) must be positive" }
                if !region.gainDecibels.isFinite || region.gainDecibels > 24 { return "\(rt).gainDecibels: \(region.gainDecibels) is not a gain" }
                if region.fadeInFrames < 0 || region.fadeInFrames > region.lengthFrames { return "\(rt).fadeInFrames: \(region.fadeInFrames) must be 0...lengthFrames" }
                if region.fadeOutFrames < 0 || region.fadeOutFrames > region.lengthFrames { return "\(rt).fadeOutFrames: \(region.fadeOutFrames) must be 0...lengthFrames" }
                if !(region.rate >= 1.0 / 32 && region.rate <= 32) { return "\(rt).rate: \(region.rate) is outside 1/32...32" }
                if let p = takeProblem(region, at: rt) { return p }
            }
            var seen = Set<[Int]>()
            for (r, region) in track.regions.enumerated() {
                guard let g = region.takeGroup, let n = region.takeNumber else { continue }
                if !seen.insert([g, n]).inserted { return "\(at).regions[\(r)].takeNumber: take \(n) of group \(g) appears twice" }
            }
        }
        return nil
    }

    /// Take fields come in pairs, and a recorded speed is a usable transport speed.
    private static func takeProblem(_ region: Region, at rt: String) -> String? {
        if region.takeGroup != nil && region.takeNumber == nil { return "\(rt).takeNumber: missing (the region has a takeGroup)" }
        if region.takeGroup == nil && region.takeNumber != nil { return "\(rt).takeGroup: missing (the region has a takeNumber)" }
        if let g = region.takeGroup, g < 1 { return "\(rt).takeGroup: \(g) must be 1 or more" }
        if let n = region.takeNumber, n < 1 { return "\(rt).takeNumber: \(n) must be 1 or more" }
        if let v = region.recordedSpeed, !(v >= 1.0 / 32 && v <= 32) { return "\(rt).recordedSpeed: \(v) is outside 1/32...32" }
        return nil
    }

    private static func rangeProblem(_ range: FrameRange?, _ name: String) -> String? {
        guard let r = range else { return nil }
        if r.startFrame < 0 { return "\(name).startFrame: \(r.startFrame) is negative" }
        if r.endFrame <= r.startFrame { return "\(name).endFrame: \(r.endFrame) must be after startFrame \(r.startFrame)" }
        return nil
    }
}
