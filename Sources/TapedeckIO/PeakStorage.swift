#if canImport(Glibc)
import Glibc
#endif

/// The values of a ``PeakFile``, per level: min and max interleaved per channel per bucket.
///
/// Either held whole in memory (built from audio, or ``PeakFile/load(path:)``), or read from
/// the file on demand (``PeakFile/open(path:)``) in chunks of ``bucketsPerChunk`` buckets,
/// keeping at most ``maxResidentChunks`` chunks per file. On-demand reads are plain `pread`,
/// not a memory map: a kernel with large page-cache folios maps 2 MB around every touched
/// page of a mapping, which made each opened file cost megabytes of RSS; here residency is
/// exactly the chunks read, bounded whatever the view.
///
/// Shared between threads through ``PeakFile`` (a Sendable value), so the chunk table is
/// guarded by a mutex; eager storage is immutable.
final class PeakStorage: @unchecked Sendable {
    /// Buckets in each level.
    let bucketCounts: [Int]
    /// Floats per bucket: channels × 2.
    let stride: Int
    /// Whether values are read from the file on demand.
    var isLazy: Bool { fd >= 0 }

    /// Buckets per on-demand chunk: 32 KB of mono, 64 KB of stereo; about 22 s of level 0.
    static let bucketsPerChunk = 4096
    /// Chunks kept per lazily read file before the oldest is dropped (≈ 1 MB of mono).
    static let maxResidentChunks = 32

    /// Eager: every level, contiguous. Lazy: nil.
    private let block: UnsafeMutablePointer<Float>?
    /// Eager: float index where each level starts in `block`. Lazy: byte offset in the file.
    private let levelStarts: [Int]
    /// Lazy: the open peak file (kept open so a rename over it cannot mix two files); else -1.
    private let fd: Int32
    private var chunks: [[UnsafeMutablePointer<Float>?]] = []
    private var resident: [(level: Int, chunk: Int)] = []
    private var nextEviction = 0
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Copies `arrays` (one per level, `stride` floats per bucket) into one allocation.
    init(copying arrays: [[Float]], stride: Int) {
        self.stride = stride
        bucketCounts = arrays.map { $0.count / stride }
        let total = arrays.reduce(0) { $0 + $1.count }
        let block = UnsafeMutablePointer<Float>.allocate(capacity: max(1, total))
        var starts: [Int] = []
        var offset = 0
        for a in arrays {
            a.withUnsafeBufferPointer { src in
                if let s = src.baseAddress { (block + offset).update(from: s, count: src.count) }
            }
            starts.append(offset)
            offset += a.count
        }
        self.block = block
        levelStarts = starts
        fd = -1
        mutex = PeakStorage.makeMutex()
    }

    /// Takes ownership of `fd`, a peak file whose levels (`bucketCounts` buckets of `stride`
    /// floats each) follow one another from byte `dataOffset`; reads nothing yet.
    init(fd: Int32, dataOffset: Int, bucketCounts: [Int], stride: Int) {
        self.stride = stride
        self.bucketCounts = bucketCounts
        var starts: [Int] = []
        var offset = dataOffset
        for n in bucketCounts {
            starts.append(offset)
            offset += n * stride * 4
        }
        levelStarts = starts
        block = nil
        self.fd = fd
        chunks = bucketCounts.map { Array(repeating: nil, count: ($0 + PeakStorage.bucketsPerChunk - 1) / PeakStorage.bucketsPerChunk) }
        mutex = PeakStorage.makeMutex()
    }

    deinit {
        block?.deallocate()
        for level in chunks { for c in level { c?.deallocate() } }
        if fd >= 0 { close(fd) }
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    private static func makeMutex() -> UnsafeMutablePointer<pthread_mutex_t> {
        let m = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        pthread_mutex_init(m, nil)
        return m
    }

    /// Calls `body` with the buckets `[from, to)` of `level` as one or more contiguous runs:
    /// a pointer to the first float of a run's first bucket, and the run's bucket count. The
    /// pointer is valid only during the call. The caller keeps the range inside the level.
    func withBuckets(level: Int, from: Int, to: Int, _ body: (UnsafePointer<Float>, Int) -> Void) {
        guard from < to else { return }
        if let block {
            body(UnsafePointer(block + levelStarts[level] + from * stride), to - from)
            return
        }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let per = PeakStorage.bucketsPerChunk
        var b = from
        while b < to {
            let c = b / per
            let runEnd = min(to, (c + 1) * per)
            // Loading may drop an older chunk, never this one, and the run is done with
            // before the next load.
            let p = chunk(level: level, index: c)
            body(UnsafePointer(p + (b - c * per) * stride), runEnd - b)
            b = runEnd
        }
    }

    /// Chunk `index` of `level`, read now if it is not resident. A read that fails (the file
    /// truncated under us, an I/O error) leaves zeros: silence in the waveform, not a crash.
    private func chunk(level: Int, index: Int) -> UnsafeMutablePointer<Float> {
        if let p = chunks[level][index] { return p }
        let per = PeakStorage.bucketsPerChunk
        let floats = min(per, bucketCounts[level] - index * per) * stride
        let p = UnsafeMutablePointer<Float>.allocate(capacity: floats)
        p.initialize(repeating: 0, count: floats)
        let bytes = floats * 4
        var done = 0
        let start = off_t(levelStarts[level] + index * per * stride * 4)
        while done < bytes {
            let n = pread(fd, UnsafeMutableRawPointer(p) + done, bytes - done, start + off_t(done))
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            done += n
        }
        if UInt32(1).littleEndian != 1 {
            for i in 0..<floats { p[i] = Float(bitPattern: UInt32(littleEndian: p[i].bitPattern)) }
        }
        if resident.count < PeakStorage.maxResidentChunks {
            resident.append((level, index))
        } else {
            let old = resident[nextEviction]
            chunks[old.level][old.chunk]?.deallocate()
            chunks[old.level][old.chunk] = nil
            resident[nextEviction] = (level, index)
            nextEviction = (nextEviction + 1) % PeakStorage.maxResidentChunks
        }
        chunks[level][index] = p
        return p
    }

    /// Every value of `level`, copied into an array (reads a lazy file's level whole).
    func array(level: Int) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(bucketCounts[level] * stride)
        withBuckets(level: level, from: 0, to: bucketCounts[level]) { p, n in
            out.append(contentsOf: UnsafeBufferPointer(start: p, count: n * stride))
        }
        return out
    }
}
