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
    /// Held by the thread through each pass over the sets, so that ``remove(_:)`` returns
    /// only once no pass is using a removed set: its files are closed right after.
    private let pass = Mutex<Int>(0)
    let board: StatusBoard
    let headerInterval: Int64
    /// Where the audio thread leaves played MIDI for MIDI takes.
    var midiHub: MIDIHub?
    private let stallMilliseconds: Int
    private let stallAtFrame: Int64
    private var stalled = false

    /// Whether this writer writes the takes' mirrors (``TakeSet/mirrorLanes``) rather than
    /// the takes (and their MIDI): a thread of its own, so neither disk holds up the other.
    let writesMirrors: Bool
    /// The mirrors' writer, beside the takes' (nil on the mirrors' writer itself).
    private let mirrorWriter: CaptureWriter?

    init(board: StatusBoard, options: EngineOptions, writesMirrors: Bool = false) {
        self.board = board
        self.writesMirrors = writesMirrors
        headerInterval = options.headerIntervalNanoseconds
        // The stall (a test's slow disk) is the takes' disk's.
        stallMilliseconds = writesMirrors ? 0 : options.writerStallMilliseconds
        stallAtFrame = options.writerStallAtFrame
        mirrorWriter = writesMirrors ? nil : CaptureWriter(board: board, options: options, writesMirrors: true)
    }

    /// Starts the thread, and the mirrors' (a better nice value than the reader's, where
    /// allowed). Control thread.
    func start() -> Bool {
        guard worker.start(name: writesMirrors ? "tapedeck-mirror" : "tapedeck-writer", nice: -5, { [self] in run() }) else { return false }
        if let mirrorWriter, !mirrorWriter.start() {
            worker.stop()
            return false
        }
        return true
    }

    /// Writes what is left and ends the thread(s). Control thread.
    func stop() {
        worker.stop()
        mirrorWriter?.stop()
    }

    /// The lanes of `set` this writer drains.
    private func lanes(of set: TakeSet) -> [TakeLane] { writesMirrors ? set.mirrorLanes : set.lanes }

    /// Starts draining `set`. Control thread.
    func add(_ set: TakeSet) {
        // The last pass's "time left" is not this one's: unknown until measured.
        board.diskMillisecondsLeft.store(-1, ordering: .relaxed)
        sets.withLock { $0.append(set) }
        wake.signal()
        mirrorWriter?.add(set)
    }

    /// Stops draining `set` (it is written and about to be closed) and waits for a pass that
    /// may be using it to end. (Without the wait the header rewrite of a pass under way ran
    /// on a file the caller had just closed: a crash in libsndfile, seen under load.)
    /// Control thread.
    func remove(_ set: TakeSet) {
        sets.withLock { $0.removeAll { $0 === set } }
        pass.withLock { _ in }
        mirrorWriter?.remove(set)
    }

    /// Wakes the thread(s): frames arrived. Audio thread: an atomic increment each.
    @inline(__always)
    func signal() {
        wake.signal()
        mirrorWriter?.signal()
    }

    /// Disk thread.
    private func run() {
        var lastHeader = monotonicNanoseconds()
        var lastSpace: Int64 = 0
        while true {
            let quitting = worker.quitting
            // The sets are read inside the pass, so a set removed before it is never touched.
            let done = pass.withLock { passes -> Bool in
                passes &+= 1
                let current = sets.withLock { $0 }
                for set in current { for lane in lanes(of: set) { drain(lane, of: set) } }
                let now = monotonicNanoseconds()
                if !writesMirrors { drainMIDI(current, now: now) }
                if now - lastHeader >= headerInterval {
                    lastHeader = now
                    for set in current { for lane in lanes(of: set) where !lane.failed.load(ordering: .relaxed) {
                        lane.writer.updateHeader()
                        lane.dryWriter?.updateHeader()
                    } }
                }
                // Four times a second: "time left" moves while it records. (The takes' disk
                // only: a mirror that fills stops alone, the recording goes on.)
                if !writesMirrors, !current.isEmpty, now - lastSpace >= 250_000_000 {
                    lastSpace = now
                    measureSpace(current)
                }
                return quitting && current.allSatisfy({ set in lanes(of: set).allSatisfy { $0.ring.availableFrames == 0 } })
            }
            if done { break }
            wake.wait(timeoutNanoseconds: 100_000_000)
        }
    }

    /// Publishes the free space and the recording time left on the disk that fills first:
    /// per file system, its free bytes less the writers' finishing reserve, over the bytes a
    /// second every take still written there adds. Disk thread.
    private func measureSpace(_ current: [TakeSet]) {
        var disks: [UInt: (free: Int64, bytesPerSecond: Int64)] = [:]
        for set in current { for lane in set.lanes where !lane.failed.load(ordering: .relaxed) {
            var fs = statvfs()
            guard statvfs(parentFolderPath(lane.request.path), &fs) == 0 else { continue }
            let free = Int64(fs.f_bavail) * Int64(fs.f_frsize)
            disks[fs.f_fsid, default: (free, 0)].bytesPerSecond += lane.bytesPerSecond
        } }
        guard let tightest = disks.values.min(by: {
            DiskSpace.secondsLeft(freeBytes: $0.free, bytesPerSecond: $0.bytesPerSecond)
                < DiskSpace.secondsLeft(freeBytes: $1.free, bytesPerSecond: $1.bytesPerSecond)
        }) else { return }
        board.diskFreeBytes.store(tightest.free, ordering: .relaxed)
        let left = DiskSpace.secondsLeft(freeBytes: tightest.free, bytesPerSecond: tightest.bytesPerSecond)
        board.diskMillisecondsLeft.store(Int64(min(left, 1e12) * 1000), ordering: .relaxed)
    }

    /// Writes everything waiting in `lane`'s ring, with silence where the audio thread
    /// dropped frames. Disk thread.
    private func drain(_ lane: TakeLane, of set: TakeSet) {
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
            // Read before the gaps: the audio thread pushes what it inserts at a hold before it
            // lets the hold go.
            let hold = lane.holdFrom.load(ordering: .acquiring)
            // A dropped span (or device time lost) due now becomes silence.
            if let gap = lane.gaps.peek(), gap.frame <= written {
                _ = lane.gaps.pop()
                if gap.replaces { lane.ring.pop(into: nil, frameCount: Int(gap.ringFrames)) }
                writeSilence(lane, of: set, at: written, frames: gap.count)
                written += gap.count
                lane.writtenFrames.store(written, ordering: .releasing)
                continue
            }
            var limit = lane.scratchFrames
            if let gap = lane.gaps.peek() { limit = min(limit, Int(gap.frame - written)) }
            // The device may yet say frames were lost before these: they wait (see `TakeLane/holdFrom`).
            if hold != .max { limit = min(limit, Int(max(0, min(hold - written, Int64(Int32.max))))) }
            // A split take: a block never crosses the end of a piece, so piece k holds
            // exactly the take's frames [k·N, (k+1)·N). The next piece starts only when a
            // frame is there for it (a take ending on a boundary leaves no empty piece).
            while !lane.failed.load(ordering: .relaxed), let end = lane.pieceEndFrame, written >= end, lane.ring.availableFrames > 0 {
                if !nextPiece(lane, of: set) { break }
            }
            if !lane.failed.load(ordering: .relaxed), let end = lane.pieceEndFrame {
                limit = min(limit, Int(max(0, min(end - written, Int64(lane.scratchFrames)))))
            }
            let k = lane.ring.pop(into: lane.scratch, frameCount: min(limit, lane.ring.availableFrames))
            if k == 0 { break }
            if !lane.failed.load(ordering: .relaxed) {
                do {
                    try lane.writer.write((0..<takeChannels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k)
                    if let dry = lane.dryWriter {
                        try dry.write((0..<takeChannels).map { UnsafePointer(lane.scratch[takeChannels + $0]) }, frameCount: k)
                    }
                    // What the file now holds, for the screen's waveform while it records.
                    lane.live?.append(UnsafePointer(lane.scratch), channelCount: takeChannels, frameCount: k)
                } catch {
                    fail(lane, of: set, error.description)
                }
            }
            lane.writtenFrames.store(written + Int64(k), ordering: .releasing)
        }
    }

    /// A write of `lane` failed: the lane stops with what its file holds, and the set counts
    /// it, so the audio thread ends the pass once no lane can be written. Disk thread.
    private func fail(_ lane: TakeLane, of set: TakeSet, _ text: String) {
        guard lane.fail(text, keptFrames: lane.framesInFiles) else { return }
        set.failedLanes.add(1, ordering: .releasing)
        // A mirror's failure is said by the transport as the mirror's; the engine's error
        // is the recording's.
        if !lane.isMirror { board.fail(text) }
        wake.signal()
    }

    /// Starts `lane`'s next piece; on failure the lane stops with the pieces it finished
    /// (false). Disk thread.
    private func nextPiece(_ lane: TakeLane, of set: TakeSet) -> Bool {
        do { try lane.startNextPiece() } catch {
            fail(lane, of: set, "\(error)")
            return false
        }
        return true
    }

    /// Writes `frames` of silence from take frame `start` (a span the audio thread dropped),
    /// across piece boundaries as the input would have gone. Disk thread.
    private func writeSilence(_ lane: TakeLane, of set: TakeSet, at start: Int64, frames: Int64) {
        let channels = lane.request.channelCount
        for c in 0..<lane.ringChannels { lane.scratch[c].update(repeating: 0, count: lane.scratchFrames) }
        var left = frames
        var at = start
        while left > 0 && !lane.failed.load(ordering: .relaxed) {
            var k = Int(min(left, Int64(lane.scratchFrames)))
            if let end = lane.pieceEndFrame {
                if at >= end {
                    if !nextPiece(lane, of: set) { break }
                    continue
                }
                k = Int(min(Int64(k), end - at))
            }
            do {
                try lane.writer.write((0..<channels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k)
                if let dry = lane.dryWriter { try dry.write((0..<channels).map { UnsafePointer(lane.scratch[$0]) }, frameCount: k) }
                lane.live?.appendSilence(frameCount: k)
            } catch {
                fail(lane, of: set, error.description)
            }
            left -= Int64(k)
            at += Int64(k)
        }
    }
}

/// How long a disk's free space lasts a recording.
public enum DiskSpace {
    /// Seconds of recording at `bytesPerSecond` before a take writer stops: the free bytes
    /// less the reserve every writer keeps to finish its file (``AudioFileWriter/finishingReserveBytes``).
    public static func secondsLeft(freeBytes: Int64, bytesPerSecond: Int64) -> Double {
        let usable = max(0, freeBytes - AudioFileWriter.finishingReserveBytes)
        return Double(usable) / Double(max(bytesPerSecond, 1))
    }
}

/// The folder holding `path`.
func parentFolderPath(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    let dir = String(path[..<slash])
    return dir.isEmpty ? "/" : dir
}
