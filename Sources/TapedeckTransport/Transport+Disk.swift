import Foundation
import TapedeckCore
import TapedeckEngine

/// A take that stopped because its file refused a write, as the transport said it.
public struct TakeFailureReport: Sendable {
    /// The take, the reason and what its file holds.
    public var failure: TakeFailure
    /// The track it was recorded on (nil: a file outside a session).
    public var track: Int?
    /// Whether the whole pass stopped with it (no take left that could be written).
    public var stoppedPass: Bool
    /// The line said on the message line / stderr.
    public var text: String
}

extension Transport {
    /// Seconds left under which a running pass is warned (once each).
    static let diskWarningSeconds: [Double] = [60, 10]

    /// Says, at once, each take of the running pass whose disk refused a write (the file is
    /// closed with what it holds; the other takes record on), and warns as the disk's time
    /// left falls under a minute and under ten seconds. Control thread, from ``snapshot()``.
    func watchDisk(_ status: EngineStatus) {
        guard let pass else { return }
        let failures = pass.set.failedTakes
        // The pass stops once nothing can be written: no take's file and no mirror.
        let everyTake = pass.set.nothingWritable
        watchMirrors(pass, stopped: everyTake)
        for f in failures where !saidFailedTakes.contains(f.index) {
            saidFailedTakes.insert(f.index)
            let report = failureReport(f, of: pass, stoppedPass: everyTake)
            takeFailures.append(report)
            // A pass that stops says it with its takes, in ``finishPassIfEnded(force:)``.
            if !everyTake { errors.append(report.text) }
        }
        guard let left = status.diskSecondsLeft, !everyTake else { return }
        if let limit = Transport.diskWarningSeconds.last(where: { left < $0 && $0 < warnedDiskSeconds }) {
            warnedDiskSeconds = limit
            notices.append("the disk fills in about \(Int(left.rounded(.up))) s at this rate: recording stops then, keeping what was written")
        }
    }

    /// The words for a take that stopped on a refused write, with what it kept; the reason
    /// comes first so a clipped message line still says it ("recording stopped: the disk is
    /// full — kept 00:07.322 (351456 frames) on track 1: audio/take-….wav"). `goesOn`: say
    /// that the pass's other takes record on.
    func failureReport(_ f: TakeFailure, of pass: RecordingPass, stoppedPass: Bool, goesOn: Bool = true) -> TakeFailureReport {
        let take = f.index < pass.takes.count ? pass.takes[f.index] : nil
        let track = take?.relativeFile == nil ? nil : take?.track
        let clock = TimeText.clock(frames: f.keptFrames, sampleRate: engine.configuration.sampleRate)
        let onTrack = track.map { " on track \($0 + 1)" } ?? ""
        let others = pass.takes.count - pass.set.failedTakes.count
        let what = stoppedPass ? "recording stopped" : "take stopped"
        var rest = stoppedPass || !goesOn || others == 0 ? "" : "; recording goes on on \(others) other take\(others == 1 ? "" : "s")"
        if !stoppedPass, goesOn, pass.set.hasLiveMirror(f.index), let mirror = take?.mirrorPath {
            rest += " — its mirror records on: \(mirror)"
        }
        let file = take?.relativeFile ?? f.request.path
        // The file's error names the file first: "PATH: the disk is full (…)".
        let prefix = f.request.path + ": "
        let reason = f.reason.hasPrefix(prefix) ? String(f.reason.dropFirst(prefix.count)) : f.reason
        let why = f.isDiskFull ? "the disk is full" : reason
        let text = "\(what): \(why) — kept \(clock) (\(f.keptFrames) frames)\(onTrack): \(file)\(rest)"
        return TakeFailureReport(failure: f, track: track, stoppedPass: stoppedPass, text: text)
    }

    /// Seconds of recording `freeBytes` hold: at the bytes a second of the takes being
    /// written while recording (the engine's measure), else at the armed tracks' rate in the
    /// take format; less the reserve a take writer keeps to finish its file.
    func diskSecondsLeft(freeBytes: Int64, status: EngineStatus) -> Double {
        if let measured = status.diskSecondsLeft { return measured }
        let channels = max(1, session.tracks.filter { $0.armed && !$0.isMIDI }.reduce(0) { $0 + max(1, min($1.inputChannels.count, 2)) })
        let bytes = Int64(channels * max(1, options.takeEncoding.bits / 8) * session.sampleRate)
        return DiskSpace.secondsLeft(freeBytes: freeBytes, bytesPerSecond: bytes)
    }
}
