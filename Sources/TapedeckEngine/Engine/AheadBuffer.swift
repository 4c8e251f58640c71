import Synchronization

/// A strip's playback rendered ahead of the device period (Reaper's anticipative processing):
/// its material through its chain, pre-fader, for sequence numbers `readSeq ..< writeSeq`, a
/// bounded few periods (about 20 ms) ahead. A worker renders whole blocks into it between
/// periods while the device's thread keeps the window open; the strip's render in the device
/// period takes its frames from here when they are, and its fader, pan, mute, solo and
/// sends still apply then. So a chain parameter is heard within ``capacityFrames``, a fader
/// at once.
///
/// The voice behind the strip has given up to ``writeSeq`` (once ``synced``): a frame is
/// either here or still in the voice's ring, never lost, except by a locate or another seek,
/// which drops everything here at once (``discard()``).
///
/// Only one thread at a time touches it: a worker holding ``claim`` while the window is open,
/// or the device's thread while it is closed (the window's atomics order the two).
final class AheadBuffer: @unchecked Sendable {
    let channelCount: Int
    /// Frames held at most (whole blocks).
    let capacityFrames: Int
    /// Frames a worker renders at once (whole periods).
    let blockFrames: Int
    /// Channel storage, `capacityFrames` each, a ring indexed from ``base``.
    let storage: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Where a worker's block goes: pointers into ``storage``.
    let blockTable: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Taken by the worker rendering a block.
    let claim = Atomic<Bool>(false)
    /// Blocks rendered ahead so far (for tests and the status). Any thread.
    let renderedBlocks = Atomic<Int64>(0)
    /// Frames held now, as the last writer left it: the workers' hint of which strips are
    /// emptiest, and what tests read (the fields below are the truth).
    let heldFrames = Atomic<Int>(0)

    /// Whether ``writeSeq`` is where the voice is (false after a seek, until the device
    /// period's render has pulled from the voice again).
    private(set) var synced = false
    private(set) var readSeq: Int64 = 0
    private(set) var writeSeq: Int64 = 0
    /// The sequence number at storage index 0 (modulo the capacity).
    private var base: Int64 = 0

    /// Storage for `channelCount` channels: `capacityFrames` (rounded down to whole
    /// `blockFrames`, at least one block). Control thread.
    init(channelCount: Int, capacityFrames: Int, blockFrames: Int) {
        self.channelCount = channelCount
        self.blockFrames = max(blockFrames, 1)
        self.capacityFrames = max(self.blockFrames, capacityFrames / self.blockFrames * self.blockFrames)
        storage = .allocate(capacity: channelCount)
        blockTable = .allocate(capacity: channelCount)
        for c in 0..<channelCount {
            (storage + c).initialize(to: .allocate(capacity: self.capacityFrames))
            storage[c].initialize(repeating: 0, count: self.capacityFrames)
            (blockTable + c).initialize(to: storage[c])
        }
    }

    deinit {
        for c in 0..<channelCount { storage[c].deallocate() }
        storage.deallocate()
        blockTable.deallocate()
    }

    /// Frames held.
    var frames: Int { Int(writeSeq - readSeq) }

    /// Drops everything held; nothing more is rendered ahead until the device period has
    /// pulled from the voice again. Audio thread (window closed).
    @inline(__always)
    func discard() {
        synced = false
        readSeq = 0
        writeSeq = 0
        heldFrames.store(0, ordering: .relaxed)
    }

    /// Drops what is held from sequence `seq` on and keeps what comes before it (a loop
    /// change's switch point: up to there the old way round still plays). Rendering ahead
    /// goes on from `seq`, which the voice gives again the new way once the disk has
    /// answered. Dropping everything (`seq` not past what the device has taken) is
    /// ``discard()``. Audio thread (window closed).
    func drop(fromSeq seq: Int64) {
        guard synced, seq > readSeq else {
            discard()
            return
        }
        if seq < writeSeq { writeSeq = seq }
        heldFrames.store(frames, ordering: .relaxed)
    }

    /// The device period rendered `frameCount` frames from `seq` itself (the voice gave them):
    /// what is held is used up, and rendering ahead goes on from after them. Audio thread.
    @inline(__always)
    func renderedInPeriod(seq: Int64, frameCount n: Int) {
        synced = true
        readSeq = seq + Int64(n)
        writeSeq = readSeq
        base = writeSeq
        heldFrames.store(0, ordering: .relaxed)
    }

    /// Copies up to `frameCount` frames from sequence `seq` into `channels` (frames before `seq`
    /// are passed over: the device skipped them). Returns how many were copied (from the
    /// start of the block). Audio thread (window closed).
    func take(into channels: UnsafeMutablePointer<UnsafeMutablePointer<Float>>, seq: Int64, frameCount n: Int) -> Int {
        guard synced, writeSeq > readSeq else { return 0 }
        if seq > readSeq { readSeq = min(seq, writeSeq) }
        guard readSeq == seq else { return 0 }
        let k = min(n, frames)
        var done = 0
        while done < k {
            let at = index(readSeq)
            let run = min(k - done, capacityFrames - at)
            for c in 0..<channelCount { (channels[c] + done).update(from: storage[c] + at, count: run) }
            done += run
            readSeq += Int64(run)
        }
        if readSeq == writeSeq { base = writeSeq }
        heldFrames.store(frames, ordering: .relaxed)
        return k
    }

    /// Where the next block goes, when there is room for it and the strip is in step with
    /// its voice (nil: nothing to render now): its first sequence number and its frames,
    /// ``blockFrames`` or, after a cut off the blocks' grid (``drop(fromSeq:)``), the fewer
    /// that reach the storage's end, so the grid is found again. The caller renders them
    /// into ``blockTable``, then calls ``wrote(frameCount:)``. A worker holding ``claim``.
    func nextBlock() -> (seq: Int64, frameCount: Int)? {
        guard synced else { return nil }
        if frames == 0 { base = writeSeq }
        let at = index(writeSeq)
        let k = min(blockFrames, capacityFrames - at)
        guard frames + k <= capacityFrames else { return nil }
        for c in 0..<channelCount { blockTable[c] = storage[c] + at }
        return (writeSeq, k)
    }

    /// The block from ``nextBlock()`` is rendered, `frameCount` frames. A worker holding ``claim``.
    func wrote(frameCount k: Int) {
        writeSeq += Int64(k)
        renderedBlocks.add(1, ordering: .relaxed)
        heldFrames.store(frames, ordering: .relaxed)
    }

    @inline(__always)
    private func index(_ seq: Int64) -> Int {
        let d = (seq - base) % Int64(capacityFrames)
        return Int(d < 0 ? d + Int64(capacityFrames) : d)
    }
}

extension Graph {
    /// How far the workers render playback ahead of the device period: whole blocks of
    /// `blockFrames` (whole periods, at least 128 frames), up to `capacityFrames`. `none`: not
    /// at all (one thread, an export).
    struct Ahead: Sendable {
        var capacityFrames = 0
        var blockFrames = 0

        static let none = Ahead()

        /// A few periods up to `milliseconds` (at least one block): at 48 kHz and 256-frame
        /// periods three periods (16 ms); at 32-frame periods seven blocks of 128 (18.7 ms).
        static func of(periodFrames n: Int, sampleRate: Int, milliseconds: Double) -> Ahead {
            guard milliseconds > 0, n > 0 else { return .none }
            let block = n * max(1, 128 / n)
            let limit = Int(Double(sampleRate) * milliseconds / 1000)
            return Ahead(capacityFrames: max(block, limit / block * block), blockFrames: block)
        }
    }
}
