import TapedeckCore
import TapedeckDSP

/// The musical clock on the audio thread: what nodes are told (the tempo map at the
/// playhead, or another program's musical time) and the metronome that follows it.
extension RenderCore {
    /// The host clock for nodes: tempo-synced nodes follow the session's tempo as heard, so at
    /// speed s the tempo they see is s × the session's — or another program's musical time
    /// while one publishes it on a shared transport (JACK's timebase master).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func transportInfo(_ g: Graph) -> TransportInfo {
        if let host = hostTransportInfo() { return host }
        return transportInfo(g, atTimelineFrame: position)
    }

    /// The host clock for nodes at timeline frame `frame` (the tempo map there, as heard
    /// at `speed`, by default the transport's: tempo × speed, a ramp's slope × speed² a
    /// frame).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func transportInfo(_ g: Graph, atTimelineFrame frame: Int64, speed given: Double? = nil) -> TransportInfo {
        let speed = given ?? speedFactor
        let p = tempoPoint(g, atFrame: Double(frame))
        var info = TransportInfo(tempoBPM: p.bpm * speed, beatPosition: p.beatPosition,
                                 beatsPerBar: p.beatsPerBar, beatUnit: p.beatUnit,
                                 sampleRate: Double(sampleRate), timelineFrame: frame,
                                 isPlaying: state == .rolling, isRecording: takes != nil, isCycling: route.loops)
        info.barStartBeat = p.barStartBeat
        info.bpmPerFrame = p.bpmPerFrame * speed * speed
        return info
    }

    /// The tempo map at timeline frame `frame`; inside the count-in, the map where the
    /// count-in ends, counted back at its tempo and meter (its beats and bars lined up with
    /// the ones it leads into).
    ///
    /// Audio thread: arithmetic only.
    @inline(__always)
    func tempoPoint(_ g: Graph, atFrame frame: Double) -> TempoPoint {
        RenderCore.tempoPoint(g.tempoTable, countIn: countInFrames, sampleRate: sampleRate, atFrame: frame)
    }

    /// ``tempoPoint(_:atFrame:)`` from what it depends on (the workers rendering ahead know
    /// the count-in from their snapshot).
    ///
    /// Audio thread or a worker: arithmetic only.
    @inline(__always)
    static func tempoPoint(_ table: TempoTable, countIn: Range<Int64>, sampleRate: Int, atFrame frame: Double) -> TempoPoint {
        guard frame < Double(countIn.upperBound), frame >= Double(countIn.lowerBound) else { return table.point(atFrame: frame) }
        let end = table.point(atFrame: Double(countIn.upperBound))
        let beats = end.beatPosition - (Double(countIn.upperBound) - frame) * end.bpm / 60 / Double(sampleRate)
        let perBar = Double(max(end.beatsPerBar, 1))
        var p = end
        p.beatPosition = beats
        p.barStartBeat = end.barStartBeat + ((beats - end.barStartBeat) / perBar).rounded(.down) * perBar
        p.bpmPerFrame = 0
        p.nextChangeFrame = Double(countIn.upperBound)
        return p
    }

    /// The metronome onto its outputs while rolling (only while takes run, when so set; never
    /// past its end frame). It is added after the master meter and never reaches a take.
    ///
    /// Audio thread: no allocation, no locks.
    func addClick(_ g: Graph, output: UnsafePointer<UnsafeMutablePointer<Float>>, frameCount n: Int, transport: TransportInfo) {
        guard clickOn, state == .rolling, !clickRecordingOnly || takes != nil, position < clickUntil else { return }
        clickBuffer[0].update(repeating: 0, count: n)
        // Where the tempo map changes inside the block (a bar with a new tempo or meter), the
        // click runs on from there with the map as it is there, so every beat after the
        // change lies on its own frame.
        var split = n
        if hostTransportInfo() == nil {
            let next = tempoPoint(g, atFrame: Double(position)).nextChangeFrame
            let off = ((next - Double(position) - fraction) / speedFactor).rounded(.up)
            if off > 0 && off < Double(n) { split = Int(off) }
        }
        var context = RenderContext(inPlace: UnsafeBufferPointer(start: clickBuffer, count: 1), frameCount: split, transport: transport)
        clickNode.process(&context)
        if split < n {
            let at = Int64((Double(position) + fraction + Double(split) * speedFactor).rounded(.down))
            var rest = transportInfo(g, atTimelineFrame: at)
            // The beat position where the rest starts exactly (the change's own beat).
            rest.beatPosition = tempoPoint(g, atFrame: Double(position) + fraction + Double(split) * speedFactor).beatPosition
            // The rest of the buffer, through the same one-entry table.
            clickBuffer[0] += split
            var context = RenderContext(inPlace: UnsafeBufferPointer(start: clickBuffer, count: 1), frameCount: n - split, transport: rest)
            clickNode.process(&context)
            clickBuffer[0] -= split
        }
        for i in 0..<clickOutputCount {
            let ch = clickOutputs[i]
            if ch < max(playbackChannels, 2) {
                MixKernels.accumulate(clickBuffer[0], into: output[ch], frameCount: n, startGain: 1, endGain: 1)
            }
        }
    }
}
