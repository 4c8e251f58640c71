import Foundation
import Synchronization
import TapedeckIO

/// The capture writer thread: drains every recording take's ring into its file, filling
/// dropped spans with silence so a take keeps its length and alignment; rewrites headers
/// twice a second (crash safety) and measures the free disk space. It has a thread of its
/// own, apart from the playback reader, so a busy disk serves the takes first; it sleeps on
/// a signal the audio thread gives when frames arrive.
final class CaptureWriter: @unchecked Sendable {
    private let worker = DiskWorker()
    private var wake: WakeSignal { worker.wake }
    private let sets = Mutex<[TakeSet]>([])
    let board: StatusBoard
    let headerInterval: Int64
    /// Where the audio thread leaves played MIDI for MIDI takes.
    var midiHub: MIDIHub?
    private let stallMilliseconds: Int
    private let stallAtFrame: Int64
    private var stalled = false

    init(board: StatusBoard, options: EngineOptions) {
        self.board = board
        headerInterval = options.headerIntervalNanoseconds
        stallMilliseconds = options.writerStallMilliseconds
        stallAtFrame = options.writerStallAtFrame
    }

    /// Starts the thread (a better nice value than the reader's, where allowed). Control thread.
    func start() -> Bool { worker.start(name: "tapedeck-write", nice: -5) { [self] in run() } }

    /// Writes what is left and ends the thread. Control thread.
    func stop() { worker.stop() }

    /// Starts draining `set`. Control thread.
    func add(_ set: TakeSet) {
        sets.withLock { $0.append(set) }
        wake.signal()
    }

    /// Stops draining `set` (it is written and about to be closed). Control thread.
    func remove(_ set: TakeSet) {
        sets.withLock { $0.removeAll { $0 === set } }
    }

    /// Wakes the thread: frames arrived. Audio thread: one atomic increment.
    @inline(__always)
    func signal() { wake.signal() }

    /// Disk thread.
    private func run() {
        var lastHeader = monotonicNanoseconds()
        var lastSpace: Int64 = 0
        while true {
            let quitting = worker.quitting
            let current = sets.withLock { $0 }
            for set in current { for lane in set.lanes { drain(lane, total: set) } }
            let now = monotonicNanoseconds()
            drainMIDI(current, now: now)
            if now - lastHeader >= headerInterval {
                lastHeader = now
                for set in current { for lane in set.lanes where !lane.failed.load(ordering: .relaxed) {
                    lane.writer.updateHeader()
                    lane.dryWriter?.updateHeader()
                } }
            }
            if let path = current.first?.lanes.first?.request.path, now - lastSpace >= 1_000_000_000 {
                lastSpace = now
                var fs = statvfs()
                if statvfs(parentFolderPath(path), &fs) == 0 {
                    board.diskFreeBytes.store(Int64(fs.f_bavail) * Int64(fs.f_frsize), ordering: .relaxed)
                }
            }
            if quitting && current.allSatisfy({ set in set.lanes.allSatisfy { $0.ring.availableFrames == 0 } }) { break }
            wake.wait(timeoutNanoseconds: 100_000_000)
        }
    }

    /// Writes everything waiting in `lane`'s ring, with silence where the audio thread
    /// dropped frames. Disk thread.
    private func drain(_ lane: TakeLane, total set: TakeSet) {
        let fill = lane.ring.availableFrames
        if fill > board.captureHighWaterFrames.load(ordering: .relaxed) {
            board.captureHighWaterFrames.store(fill, ordering: .relaxed)
        }
        let takeChannels = lane.request.channelCount
        while true {
            var written = lane.writtenFrames.load(ordering: .relaxed)
            if !stalled, stallMilliseconds > 0, written >= stallAtFrame {
                stalled = true
                sleepNanoseconds(Int64(stallMilliseconds) * 1_000_000)
            }
            // A dropped span due now becomes silence.
            if let gap = lane.gaps.peek(), gap.frame <= written {
                _ = lane.gaps.pop()
                writeSilence(lane, frames: gap.count)
                written += gap.count
                lane.writtenFrames.store(written, ordering: .releasing)
                continue
            }
            var limit = lane.scratchFrames
            if let gap = lane.gaps.peek() { limit = min(limit, Int(gap.frame - written)) }
            let k = lane.ring.pop(into: lane.scratch, frameCount: min(limit, lane.ring.availableFrames))
            if k == 0 { break }
            if !lane.failed.load(ordering: .relaxed) {
                do {
                    try lane.writer.write((0..<takeChannels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k)
                    if let dry = lane.dryWriter {
                        try dry.write((0..<takeChannels).map { UnsafePointer(lane.scratch[takeChannels + $0]) }, frameCount: k)
                    }
                } catch {
                    lane.fail(error.description)
                    board.fail(error.description)
                }
            }
            lane.writtenFrames.store(written + Int64(k), ordering: .releasing)
        }
    }

    private func writeSilence(_ lane: TakeLane, frames: Int64) {
        let channels = lane.request.channelCount
        for c in 0..<lane.ringChannels { lane.scratch[c].update(repeating: 0, count: lane.scratchFrames) }
        var left = frames
        while left > 0 && !lane.failed.load(ordering: .relaxed) {
            let k = Int(min(left, Int64(lane.scratchFrames)))
            do {
                try lane.writer.write((0..<channels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k)
                if let dry = lane.dryWriter { try dry.write((0..<channels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k) }
            } catch {
                lane.fail(error.description)
                board.fail(error.description)
            }
            left -= Int64(k)
        }
    }
}

/// The folder holding `path`.
func parentFolderPath(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
}
