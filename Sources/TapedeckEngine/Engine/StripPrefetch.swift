import CPrefetch

/// The frames each strip's next block takes from its playback ring, fetched into the cache
/// while the strip before it renders.
///
/// The disk thread wrote those frames long before (the rings hold a second), and at 256
/// tracks a period the strips' working set passes the second-level cache, so every strip's
/// first read of its ring waited on memory, one strip after another: the ring copy was a
/// tenth of the audio thread's time at 32-frame periods, and more with automation, whose
/// lines add to the working set. No hardware prefetcher follows a few lines a strip across
/// hundreds of rings. Fetched a strip ahead, the lines arrive while that strip's chain runs.
///
/// The addresses sit in one flat table, so fetching needs no pointer of the strip's to be
/// read first: an entry is written after the strip's render (where its next block starts).
/// (Fetching each strip's automation lines the same way measured no better in `bench
/// automation`, twice, four pairs of runs each: left out.)
struct StripPrefetch {
    /// One strip's addresses.
    private struct Entry {
        var ring: UnsafeRawPointer?
        var ringBytes = 0
        /// The strip's ring (its voice's, kept by the graph's strips), unretained: taking it
        /// from the strip on the audio thread retained and released it.
        var ringObject: Unmanaged<FrameRing>?
    }
    private let entries: UnsafeMutablePointer<Entry>
    private let count: Int

    /// At most this much of a ring is fetched ahead (a 32× mix reads far more, but streams
    /// through it: see ``FrameRing``).
    private static let ringBytesLimit = 1024

    /// A table for `strips`, their rings filled in. Control thread (allocates).
    init(strips: [PlaybackStrip]) {
        count = strips.count
        entries = .allocate(capacity: max(count, 1))
        entries.initialize(repeating: Entry(), count: max(count, 1))
        for (i, strip) in strips.enumerated() { entries[i].ringObject = strip.voice.ring.map { Unmanaged.passUnretained($0) } }
    }

    /// Frees the table. Control thread, once, when the graph goes.
    func deallocate() {
        entries.deinitialize(count: max(count, 1))
        entries.deallocate()
    }

    /// Notes where strip `i`'s next block of `frameCount` frames lies in its ring.
    ///
    /// Audio thread: loads and stores.
    @inline(__always)
    func noteRing(strip i: Int, frameCount: Int) {
        guard i < count, let ring = entries[i].ringObject else { return }
        let next = ring._withUnsafeGuaranteedRef { $0.nextRead(frameCount: frameCount) }
        entries[i].ring = next.address
        entries[i].ringBytes = min(next.bytes, StripPrefetch.ringBytesLimit)
    }

    /// Fetches strip `i`'s lines into the cache. A hint: it never waits, and never faults.
    ///
    /// Audio thread: prefetch instructions only.
    @inline(__always)
    func fetch(strip i: Int) {
        guard i < count else { return }
        let e = entries[i]
        if let ring = e.ring { StripPrefetch.lines(ring, bytes: e.ringBytes) }
    }

    /// Every line that `bytes` bytes from `address` touch.
    ///
    /// Audio thread: prefetch instructions only.
    @inline(__always)
    private static func lines(_ address: UnsafeRawPointer, bytes: Int) {
        let first = Int(bitPattern: address) & ~63
        let end = Int(bitPattern: address) + bytes
        var line = first
        while line < end {
            td_prefetch_keep(UnsafeRawPointer(bitPattern: line))
            line += 64
        }
    }
}
