import TapedeckDSP

/// One straight piece of a block's gains: frames `start ..< start + count`, each side going
/// from its value at the first frame toward its value at the frame after the last (as
/// ``MixKernels/accumulate(_:into:frameCount:startGain:endGain:)`` takes a ramp).
struct GainPiece {
    var start: Int
    var count: Int
    var left: Float
    var leftEnd: Float
    var right: Float
    var rightEnd: Float
}

/// A block's gains as straight pieces (automation's curves between anchors), so the mix
/// applies them with the same ramp kernels a fader move uses instead of writing and reading
/// a gain for every frame. Fixed capacity, allocated on the control thread; filled and read
/// on the audio thread (the count lives in plain memory: a stored `var` of a class is
/// checked for exclusive access at every use).
struct GainPieces {
    let pieces: UnsafeMutablePointer<GainPiece>
    private let countStorage: UnsafeMutablePointer<Int>
    let capacity: Int

    /// Room for `capacity` pieces. Control thread.
    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        pieces = .allocate(capacity: self.capacity)
        countStorage = .allocate(capacity: 1)
        countStorage.initialize(to: 0)
    }

    /// Pieces kept in memory the owner gives (and frees): the count at `count`, room for
    /// `capacity` pieces at `pieces`. Control thread.
    init(count: UnsafeMutablePointer<Int>, pieces: UnsafeMutablePointer<GainPiece>, capacity: Int) {
        self.capacity = max(capacity, 1)
        self.pieces = pieces
        countStorage = count
    }

    /// Frees the storage. Control thread, once, when the owner goes.
    func deallocate() {
        pieces.deallocate()
        countStorage.deallocate()
    }

    /// The pieces filled this block.
    var count: Int {
        @inline(__always) get { countStorage.pointee }
        nonmutating set { countStorage.pointee = newValue }
    }

    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func append(_ piece: GainPiece) {
        guard count < capacity else { return }
        pieces[count] = piece
        count += 1
    }

    /// One piece holding `left`/`right` over `frameCount` frames.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func hold(left: Float, right: Float, frameCount n: Int) {
        count = 0
        append(GainPiece(start: 0, count: n, left: left, leftEnd: left, right: right, rightEnd: right))
    }

    /// Multiplies `buffer` in place by side `side` (0 left, 1 right) of the pieces.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func scale(_ buffer: UnsafeMutablePointer<Float>, side: Int) {
        for k in 0..<count {
            let p = pieces[k]
            let first = side == 0 ? p.left : p.right, end = side == 0 ? p.leftEnd : p.rightEnd
            if first == end {
                MixKernels.scale(buffer + p.start, frameCount: p.count, gain: first)
            } else {
                // The ramp kernel goes from the frame before to the last frame.
                let step = (end - first) / Float(max(p.count, 1))
                MixKernels.ramp(buffer + p.start, frameCount: p.count, from: first - step, to: end - step)
            }
        }
    }

    /// Adds `source` × side `side` of the pieces into `destination`.
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    func accumulate(_ source: UnsafePointer<Float>, into destination: UnsafeMutablePointer<Float>, side: Int) {
        for k in 0..<count {
            let p = pieces[k]
            MixKernels.accumulate(source + p.start, into: destination + p.start, frameCount: p.count,
                                  startGain: side == 0 ? p.left : p.right, endGain: side == 0 ? p.leftEnd : p.rightEnd)
        }
    }
}
