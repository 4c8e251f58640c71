import TapedeckDSP

/// One straight piece of a block's gains: frames `start ..< start + count`, each side going
/// from its value at the first frame by its step per frame, toward its value at the frame
/// after the last (`leftEnd`, `rightEnd`). The step is worked out once, with the piece: the
/// kernels that took the ends divided for it again (in `perf annotate` the waits on those
/// divisions were about a fifth of `applyStrip`'s samples). 32 bytes.
struct GainPiece {
    var start: Int32
    var count: Int32
    var left: Float
    var leftEnd: Float
    var right: Float
    var rightEnd: Float
    var leftStep: Float
    var rightStep: Float

    /// A piece of `count` frames from `start`, each side from its first value by its step.
    @inline(__always)
    init(start: Int, count: Int, left: Float, leftStep: Float, right: Float, rightStep: Float) {
        self.start = Int32(truncatingIfNeeded: start)
        self.count = Int32(truncatingIfNeeded: count)
        self.left = left
        self.right = right
        self.leftStep = leftStep
        self.rightStep = rightStep
        leftEnd = left + leftStep * Float(count)
        rightEnd = right + rightStep * Float(count)
    }

    /// Both sides times `left` and `right` (a send's pan).
    @inline(__always)
    mutating func scale(left l: Float, right r: Float) {
        left *= l
        leftEnd *= l
        leftStep *= l
        right *= r
        rightEnd *= r
        rightStep *= r
    }
}

/// A block's gains as straight pieces (automation's curves between anchors), so the mix
/// applies them with the same ramp kernels a fader move uses instead of writing and reading
/// a gain for every frame. Fixed capacity, allocated on the control thread; filled and read
/// on the audio thread (the count lives in plain memory: a stored `var` of a class is
/// checked for exclusive access at every use).
struct GainPieces {
    private let pieces: UnsafeMutablePointer<GainPiece>
    private let countStorage: UnsafeMutablePointer<Int>
    let capacity: Int
    /// Pieces from one piece to the next: a strip's fader, pan and send tables lie
    /// interleaved, so that a block's first pieces of all three share the lines after the
    /// strip's other automation state (one line read, not three tables' lines pages apart).
    private let stride: Int

    /// Room for `capacity` pieces. Control thread.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        pieces = .allocate(capacity: self.capacity)
        countStorage = .allocate(capacity: 1)
        countStorage.initialize(to: 0)
        stride = 1
    }

    /// Pieces kept in memory the owner gives (and frees): the count at `count`, room for
    /// `capacity` pieces at `pieces`, `stride` pieces apart. Control thread.
    init(count: UnsafeMutablePointer<Int>, pieces: UnsafeMutablePointer<GainPiece>, capacity: Int, stride: Int = 1) {
        self.capacity = max(capacity, 1)
        self.pieces = pieces
        countStorage = count
        self.stride = max(stride, 1)
    }

    /// Frees the storage of pieces made with ``init(capacity:)``. Control thread, once, when the owner goes.
    func deallocate() {
        pieces.deallocate()
        countStorage.deallocate()
    }

    /// Piece `k` of this block (below ``count``).
    ///
    /// Audio thread: a load or store.
    subscript(_ k: Int) -> GainPiece {
        @inline(__always) get { pieces[k &* stride] }
        @inline(__always) nonmutating set { pieces[k &* stride] = newValue }
    }

    /// The pieces filled this block.
    var count: Int {
        @inline(__always) get { countStorage.pointee }
        nonmutating set { countStorage.pointee = newValue }
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func append(_ piece: GainPiece) {
        // The count read once: stored pieces may alias it, so reading it again waited on the store.
        let c = count
        guard c < capacity else { return }
        self[c] = piece
        count = c + 1
    }

    /// One piece holding `left`/`right` over `frameCount` frames.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func hold(left: Float, right: Float, frameCount n: Int) {
        count = 0
        append(GainPiece(start: 0, count: n, left: left, leftStep: 0, right: right, rightStep: 0))
    }

    /// Multiplies `buffer` in place by side `side` (0 left, 1 right) of the pieces.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func scale(_ buffer: UnsafeMutablePointer<Float>, side: Int) {
        for k in 0..<count {
            let p = self[k]
            let first = side == 0 ? p.left : p.right, step = side == 0 ? p.leftStep : p.rightStep
            if step == 0 {
                MixKernels.scale(buffer + Int(p.start), frameCount: Int(p.count), gain: first)
            } else {
                MixKernels.ramp(buffer + Int(p.start), frameCount: Int(p.count), start: first, step: step)
            }
        }
    }

    /// Adds `source` × side `side` of the pieces into `destination`.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, side: Int) {
        for k in 0..<count {
            let p = self[k]
            let first = side == 0 ? p.left : p.right, step = side == 0 ? p.leftStep : p.rightStep
            let at = Int(p.start), frames = Int(p.count)
            if step == 0 {
                MixKernels.accumulate(source + at, into: destination + at, frameCount: frames, startGain: first, endGain: first)
            } else {
                MixKernels.accumulate(source + at, into: destination + at, frameCount: frames, start: first, step: step)
            }
        }
    }
}
