import Foundation
import TapedeckIO

extension Engine {
    /// The body of the disk thread: drain the capture ring into the take (rewriting its
    /// header every ``EngineOptions/headerIntervalNanoseconds``), keep the playback rings
    /// full, and measure the free disk space. Ends once the audio thread has ended and the
    /// capture ring is empty. Disk thread: may block on I/O and allocate.
    func diskLoop() {
        var lastHeader = monotonicNanoseconds()
        var lastSpace: Int64 = 0
        let folder = take.map { parentFolderPath($0.path) }
        while true {
            var worked = false
            if let ring = captureRing {
                let k = ring.pop(into: diskBuffers, frameCount: min(ring.availableFrames, diskBlockFrames))
                if k > 0 {
                    worked = true
                    if !diskFailed.load(ordering: .relaxed), let w = writer {
                        let wet = (0..<takeChannelCount).map { UnsafePointer(diskBuffers[$0]) }
                        do {
                            try w.write(wet, frameCount: k)
                            if let dry = dryWriter {
                                try dry.write((0..<takeChannelCount).map { UnsafePointer(diskBuffers[takeChannelCount + $0]) }, frameCount: k)
                            }
                        } catch {
                            board.fail(error.description)
                            board.state.store(EngineState.failed.rawValue, ordering: .releasing)
                            diskFailed.store(true, ordering: .releasing)
                        }
                    }
                }
            }
            for t in trackRings.indices where fillTrackRing(t) { worked = true }
            let now = monotonicNanoseconds()
            if now - lastHeader >= options.headerIntervalNanoseconds {
                lastHeader = now
                if !diskFailed.load(ordering: .relaxed) { writer?.updateHeader(); dryWriter?.updateHeader() }
            }
            if let folder, now - lastSpace >= 1_000_000_000 {
                lastSpace = now
                var fs = statvfs()
                if statvfs(folder, &fs) == 0 {
                    board.diskFreeBytes.store(Int64(fs.f_bavail) * Int64(fs.f_frsize), ordering: .relaxed)
                }
            }
            if audioDone.load(ordering: .acquiring) && (captureRing?.availableFrames ?? 0) == 0 { break }
            if !worked { sleepNanoseconds(2_000_000) }
        }
    }

    /// Renders track `t` ahead into its ring while there is room for a block. Returns whether
    /// anything was rendered. Disk thread (or the control thread before the start).
    @discardableResult
    func fillTrackRing(_ t: Int) -> Bool {
        guard let plan else { return false }
        let ring = trackRings[t]
        let streamer = streamers[t]
        let loops = plan.loop && plan.endFrame > plan.startFrame
        var any = false
        while ring.freeFrames >= streamer.blockFrames {
            var k = streamer.blockFrames
            let cursor = trackCursors[t]
            if loops { k = Int(min(Int64(k), plan.endFrame - cursor)) }
            do { try streamer.render(start: cursor, frameCount: k) } catch {
                board.fail(error.description)
                for ch in 0..<streamer.channelCount { streamer.output[ch].update(repeating: 0, count: k) }
            }
            ring.push(streamer.output, frameCount: k)
            trackCursors[t] = cursor + Int64(k)
            if loops && trackCursors[t] >= plan.endFrame { trackCursors[t] = plan.startFrame }
            any = true
        }
        return any
    }
}

/// The folder holding `path`.
func parentFolderPath(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
}
