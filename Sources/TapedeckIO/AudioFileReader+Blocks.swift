extension AudioFileReader {
    /// Reads the rest of the file in blocks of up to 4096 frames into planar buffers (reused
    /// from block to block) and hands each block to `body`. Returns the frames read.
    @discardableResult
    public func forEachBlock(_ body: (_ channels: [UnsafeMutablePointer<Float>], _ frameCount: Int) throws -> Void) throws -> Int64 {
        let blockFrames = 4096
        let buffers = (0..<channelCount).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        defer { buffers.forEach { $0.deallocate() } }
        var total: Int64 = 0
        while true {
            let n = try read(into: buffers, frameCount: blockFrames)
            if n == 0 { return total }
            try body(buffers, n)
            total += Int64(n)
        }
    }
}
