import Synchronization
import TapedeckIO
#if canImport(Glibc)
import Glibc
#endif

/// Open audio files shared by every region that plays from them, opened when a region is
/// about to be read and kept while they are used, at most ``capacity`` at once in the
/// process however many regions a session has (a session of 1,100 regions of 0.1 s, each its
/// own file, used to hold 1,100 files open and fail with "Too many open files").
///
/// A reader is lent to one thread for one read (``withReader(path:blockFrames:_:)``); two
/// threads reading one file at once get two readers. Idle readers stay open for the next
/// read; when the count would pass ``capacity`` the one idle longest is closed.
///
/// Not for the audio thread: it opens and closes files. The disk thread and export workers.
final class ReaderPool: @unchecked Sendable {
    /// A reader and where its next sequential read starts (so a region that follows on from
    /// where the file was left reads without seeking).
    final class Lease: @unchecked Sendable {
        let reader: AudioFileReader
        let key: String
        /// The frame the next read without a seek returns.
        var nextFrame: Int64 = 0
        fileprivate var lastUse: UInt64 = 0
        init(reader: AudioFileReader, key: String) {
            self.reader = reader
            self.key = key
        }
    }

    /// The pool of the process.
    static let shared = ReaderPool(capacity: ReaderPool.defaultCapacity)

    /// Files open at most (more only while more threads than this read at once): a quarter of
    /// the process's descriptor limit, between 8 and 256, so takes, peaks and sockets keep room.
    static var defaultCapacity: Int {
        var limit = rlimit()
        let soft = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 1024
        return min(256, max(8, soft / 4))
    }

    /// The most files this pool keeps open.
    let capacity: Int
    private struct State {
        var idle: [String: [Lease]] = [:]
        var openCount = 0
        var clock: UInt64 = 0
    }
    private let state = Mutex(State())

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Files open now (idle and lent). Any thread.
    var openCount: Int { state.withLock { $0.openCount } }

    /// Lends a reader of `path` (opened now when none is idle) to `body`, then takes it back.
    /// Throws the reader's error, naming the file, when it cannot be opened.
    func withReader<R>(path: String, blockFrames: Int, _ body: (Lease) throws(AudioFileError) -> R) throws(AudioFileError) -> R {
        let key = "\(blockFrames)|\(path)"
        var evicted: Lease?
        let found: Lease? = state.withLock { s in
            if var list = s.idle[key], let lease = list.popLast() {
                s.idle[key] = list.isEmpty ? nil : list
                return lease
            }
            s.openCount += 1
            if s.openCount > capacity { evicted = ReaderPool.takeOldestIdle(&s) }
            return nil
        }
        evicted?.reader.close()
        let lease: Lease
        if let found { lease = found } else {
            do { lease = Lease(reader: try AudioFileReader(path: path, blockFrames: blockFrames), key: key) } catch {
                state.withLock { $0.openCount -= 1 }
                throw error
            }
        }
        defer { giveBack(lease) }
        return try body(lease)
    }

    private func giveBack(_ lease: Lease) {
        let close = state.withLock { s -> Bool in
            if s.openCount > capacity {
                s.openCount -= 1
                return true
            }
            s.clock += 1
            lease.lastUse = s.clock
            s.idle[lease.key, default: []].append(lease)
            return false
        }
        if close { lease.reader.close() }
    }

    /// Removes the idle lease used longest ago, counting it closed (the caller closes it).
    private static func takeOldestIdle(_ s: inout State) -> Lease? {
        var oldest: (key: String, index: Int, use: UInt64)?
        for (key, list) in s.idle {
            for (i, lease) in list.enumerated() where oldest == nil || lease.lastUse < oldest!.use {
                oldest = (key, i, lease.lastUse)
            }
        }
        guard let oldest, var list = s.idle[oldest.key] else { return nil }
        let lease = list.remove(at: oldest.index)
        s.idle[oldest.key] = list.isEmpty ? nil : list
        s.openCount -= 1
        return lease
    }

    /// Closes every idle reader (an export finished, a graph was replaced). Any thread but audio.
    func closeIdle() {
        let all = state.withLock { s -> [Lease] in
            let leases = s.idle.values.flatMap { $0 }
            s.openCount -= leases.count
            s.idle = [:]
            return leases
        }
        for lease in all { lease.reader.close() }
    }

    /// What a region's file holds, learned by opening it once and closing it again.
    struct FileInfo {
        var channelCount: Int
        var sampleRate: Int
        /// For a file wider than stereo: how its channels fold onto a track's two.
        var downmix: StereoDownmix?
    }

    /// Opens each distinct path of `paths` once (and closes it): the channel count and rate
    /// of each, or the first file's error. A missing or corrupt file fails here, before
    /// anything plays or is written.
    static func probe(_ paths: some Sequence<String>) throws(AudioFileError) -> [String: FileInfo] {
        var out: [String: FileInfo] = [:]
        for path in paths where out[path] == nil {
            let reader = try AudioFileReader(path: path, blockFrames: 16)
            out[path] = FileInfo(channelCount: reader.channelCount, sampleRate: reader.sampleRate,
                                 downmix: reader.channelCount > 2 ? StereoDownmix(layout: reader.channelLayout) : nil)
            reader.close()
        }
        return out
    }
}
