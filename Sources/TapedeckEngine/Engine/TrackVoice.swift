import Synchronization
import TapedeckCore
import TapedeckDSP
import TapedeckIO

/// One track's material on its way from disk to the audio thread: the disk thread renders the
/// track's regions ahead into a ring; the audio thread takes them out, frame-aligned with the
/// transport (at another speed, as fast as the mix's time-pitch processors ask).
///
/// **Sequence numbers.** The transport counts the timeline frames it has rolled through since
/// the engine started (its *sequence*, ``RenderTransport/seq``). Every frame in the ring
/// belongs to one sequence number. When the transport jumps (locate, a loop switched on or
/// off, a new voice joining while it plays) the audio thread posts a *seek*: from sequence
/// `seqStart` on, play timeline frame `timelineStart` and onwards along `route`. The disk thread
/// answers with a *mark*: "the ring holds sequence `seqStart` of that seek at ring index
/// `ringIndex`, and what follows". Until the mark arrives the audio thread keeps playing what
/// it has (when the seek is a later switch point) or plays silence; then it drops what lies
/// before the mark. Nothing waits on the disk: a frame that is not there is silence, and is
/// counted and reported.
///
/// Built on the control thread (which probes the files); afterwards the audio thread owns the
/// read side and the disk thread the write side (which borrows open files from
/// ``ReaderPool`` as its regions come up, never the audio thread).
final class TrackVoice: @unchecked Sendable {
    /// Channels of the track (1 or 2).
    let channelCount: Int
    /// What the voice plays, as given to the builder (to reuse the voice when unchanged).
    let sources: [GraphSpec.Source]
    /// Nil for a track with no material: it plays silence and costs the disk nothing.
    let ring: FrameRing?
    /// The ring unretained, for the audio thread (``ring`` holds it): taking a class reference
    /// out of a property retains and releases it, every strip every period.
    private let ringRef: Unmanaged<FrameRing>?
    private let streamer: TrackStreamer?
    /// NaN and infinite samples this voice's files held, replaced by silence. Any thread.
    var nonFiniteSampleCount: Int64 { streamer?.nonFiniteSamples.load(ordering: .relaxed) ?? 0 }
    private let requests = Int64Mailbox(count: 6)
    private let marks = Int64Mailbox(count: 3)
    /// How long `pull` may wait for a late disk (0 on real devices: never).
    private let waitNanoseconds: Int64
    /// A freewheeling export's (``EngineOptions/readsDiskInline``): once the ring is empty and
    /// no seek is under way, `pull` decodes the regions straight into the strip's buffers and
    /// the disk side leaves the ring alone (every frame copied through the ring was 16 % of
    /// an export). Then the disk side and the render never run at once (the exporting thread
    /// fills between periods), so the two sides' state may be shared.
    private let readsDirect: Bool

    // Audio thread.
    private(set) var wantedEpoch: Int64 = -1
    private var activeEpoch: Int64 = -1
    /// Sequence number of the frame at the ring's read position (valid once an epoch is active).
    private var ringSeq: Int64 = 0
    /// Set when an epoch was adopted and the strip's chain has not been primed for it: not
    /// for a switch that continued the old material exactly up to its switch point (a loop
    /// set while rolling), where the chain hears one unbroken stream, as at a loop's wrap.
    var adoptedSincePrime = false
    /// For a seek that keeps what the ring holds up to a switch point: that point. Until its
    /// answer comes, nothing past it is read as old material.
    private var pendingSwitchSeq: Int64?
    private let requestScratch: UnsafeMutablePointer<Int64>
    private let markScratch: UnsafeMutablePointer<Int64>

    // Disk thread.
    private var servedEpoch: Int64 = -1
    private var diskRoute = PlayRoute.straight
    private var diskCursor: Int64 = 0
    private var pushedSeq: Int64 = 0
    /// A switch the disk is working towards: old material up to `switchSeq`, then the seek.
    private var switchPending = false
    private var switchSeq: Int64 = 0
    private var nextRoute = PlayRoute.straight
    private var nextTimeline: Int64 = 0
    private var nextEpoch: Int64 = 0
    /// The sequence the last answered seek starts at: its first block may go into the
    /// ring's reserve.
    private var publishedSeq: Int64 = 0
    private let diskScratch: UnsafeMutablePointer<Int64>

    /// Probes every source file and allocates the ring. Control thread.
    init(sources: [GraphSpec.Source], channelCount: Int, ringFrames: Int, blockFrames: Int,
         waitNanoseconds: Int64, readsDirect: Bool = false) throws(AudioFileError) {
        self.channelCount = channelCount
        self.sources = sources
        self.waitNanoseconds = waitNanoseconds
        self.readsDirect = readsDirect
        if sources.isEmpty {
            streamer = nil
            ring = nil
        } else {
            streamer = try TrackStreamer(sources: sources, channelCount: channelCount, blockFrames: blockFrames)
            // One block more than the fill: room for a switch's first block (``reserveFrames``).
            ring = FrameRing(channelCount: channelCount, capacityFrames: max(ringFrames, 2 * blockFrames) + blockFrames)
        }
        ringRef = ring.map { Unmanaged.passUnretained($0) }
        requestScratch = .allocate(capacity: 6)
        requestScratch.initialize(repeating: 0, count: 6)
        markScratch = .allocate(capacity: 3)
        markScratch.initialize(repeating: 0, count: 3)
        diskScratch = .allocate(capacity: 6)
        diskScratch.initialize(repeating: 0, count: 6)
    }

    deinit {
        requestScratch.deallocate()
        markScratch.deallocate()
        diskScratch.deallocate()
    }

    /// Whether the disk thread has anything to do for this voice.
    var streams: Bool { ring != nil }

    // MARK: - Audio thread

    /// Asks the disk for sequence `seqStart` onwards: timeline `timelineStart`, then along
    /// `route`. With `continuesOld`, what the ring already holds stays valid up to
    /// `seqStart` (a later switch point); otherwise it is dropped as soon as the answer comes.
    ///
    /// Audio thread: no allocation, no locks.
    func requestSeek(epoch: Int64, seqStart: Int64, timelineStart: Int64, route: PlayRoute, continuesOld: Bool) {
        wantedEpoch = epoch
        guard ring != nil else {
            activeEpoch = epoch
            ringSeq = seqStart
            return
        }
        // Keeping the ring's material is only safe from a settled state (no other switch under way).
        let continuing = continuesOld && activeEpoch >= 0 && pendingSwitchSeq == nil
        pendingSwitchSeq = continuing ? seqStart : nil
        let flags: Int64 = (route.loops ? 1 : 0) | (continuing ? 2 : 0)
        requests.post { set in
            set(0, epoch); set(1, seqStart); set(2, timelineStart)
            set(3, route.loopStart); set(4, route.loopEnd); set(5, flags)
        }
    }

    /// Whether frames for sequence `seq` onwards (`frameCount` of them) are in the ring
    /// under the wanted seek, so playing from `seq` needs no silence.
    ///
    /// Audio thread: no allocation, no locks.
    func hasData(atSeq seq: Int64, frameCount: Int) -> Bool {
        guard let ring else { return true }
        settle(seq: seq)
        // Decoded straight from the files: always there.
        if readsDirect && decodesDirect(seq: seq) { return true }
        let end = seq + Int64(frameCount)
        let available = Int64(ring.availableFrames)
        // Frames before the data's start are silence by design (nothing was asked for there).
        if activeEpoch == wantedEpoch { return ringSeq + available >= end }
        let write = ring.writePosition
        let answered = marks.read(into: markScratch) && markScratch[0] == wantedEpoch
        // Before a pending switch point the material already in the ring still holds.
        if activeEpoch >= 0, let switchSeq = answered ? markScratch[2] : pendingSwitchSeq {
            let oldEnd = ringSeq + (answered ? min(available, max(0, markScratch[1] - ring.readPosition)) : available)
            if end <= switchSeq { return oldEnd >= end }
            guard answered, oldEnd >= switchSeq else { return false }
            return switchSeq + (write - markScratch[1]) >= end
        }
        guard answered else { return false }
        return markScratch[2] + (write - markScratch[1]) >= end
    }

    /// Takes the answer to the wanted seek if it is due at `seq`, without reading (so a
    /// strip learns of the new seek before it pulls, and can prime its chain).
    ///
    /// Audio thread: no allocation, no locks.
    func settle(seq: Int64) {
        guard let ring else { return }
        _ = adoptIfDue(seq: seq, oldAvailable: ring.availableFrames, ring: ring)
    }

    /// Takes the answer to the wanted seek when it has come and the old material has been
    /// used up to its switch point (or cannot reach it, or the transport is already past it).
    /// Returns the frames of old material still to play before switching (Int.max: no switch
    /// pending).
    ///
    /// Audio thread: no allocation, no locks.
    @inline(__always)
    private func adoptIfDue(seq: Int64, oldAvailable: Int, ring: FrameRing) -> Int {
        guard activeEpoch != wantedEpoch else { return .max }
        guard marks.read(into: markScratch), markScratch[0] == wantedEpoch else {
            // Not answered yet: old material up to a switch point, none past it.
            if activeEpoch >= 0, let switchSeq = pendingSwitchSeq { return Int(max(0, switchSeq - ringSeq)) }
            return .max
        }
        let markIndex = markScratch[1], markSeq = markScratch[2]
        let oldLeft = Int64(min(Int64(oldAvailable), max(0, markIndex - ring.readPosition)))
        if activeEpoch < 0 || ringSeq >= markSeq || ringSeq + oldLeft < markSeq || seq >= markSeq {
            // Seamless: the old material ran out exactly at the switch point of a seek that
            // continues it. (Priming then fed the chain frames already played: silence, heard
            // as a chain's latency's worth of dropout before a new loop's first wrap.)
            let seamless = activeEpoch >= 0 && pendingSwitchSeq == markSeq && ringSeq == markSeq
            ring.skip(toReadPosition: markIndex)
            ringSeq = markSeq
            activeEpoch = wantedEpoch
            pendingSwitchSeq = nil
            if !seamless { adoptedSincePrime = true }
            return .max
        }
        return Int(markSeq - ringSeq)
    }

    /// Fills `frameCount` frames of `channels` from `offset` with sequence `seq` onwards:
    /// what is in the ring, aligned (frames already passed are dropped, frames not yet there
    /// are silence). Returns how many frames were missing although they should have been
    /// there (an underrun, which the caller reports).
    ///
    /// Audio thread: no allocation, no locks; waits for the disk only when the engine runs
    /// on an unpaced device and asked to (``EngineOptions/waitsForDisk``).
    func pull(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int = 0, frameCount n: Int, seq: Int64) -> Int {
        if readsDirect, let ring, inStep {
            // What the ring still holds first (its first fill), then straight from the files.
            let held = min(n, max(0, Int(pushedSeq - seq)), ring.availableFrames)
            var missing = 0
            if held > 0 {
                var sink = ChannelSink(channels: channels, channelCount: channelCount)
                missing = pull(into: &sink, offset: offset, frameCount: held, seq: seq)
            }
            if held < n && decodesDirect(seq: seq + Int64(held)) {
                return missing + decode(into: channels, offset: offset + held, frameCount: n - held)
            }
            if held == n { return missing }
        }
        var sink = ChannelSink(channels: channels, channelCount: channelCount)
        return pull(into: &sink, offset: offset, frameCount: n, seq: seq)
    }

    /// ``pull(into:offset:frameCount:seq:)`` handing the frames to `sink` as they lie in the
    /// ring (interleaved) and the silence as silence, for a reader that mixes them straight
    /// from there.
    ///
    /// Audio thread: as ``pull(into:offset:frameCount:seq:)``.
    @inline(__always)
    func pull<Sink: FrameSink>(into sink: inout Sink, offset: Int = 0, frameCount n: Int, seq: Int64) -> Int {
        guard let ringRef else {
            sink.silence(at: offset, count: n)
            return 0
        }
        return ringRef._withUnsafeGuaranteedRef { pull(from: $0, into: &sink, offset: offset, frameCount: n, seq: seq) }
    }

    /// ``pull(into:offset:frameCount:seq:)`` from `ring` (the voice's, taken unretained).
    ///
    /// Audio thread: as ``pull(into:offset:frameCount:seq:)``.
    @inline(__always)
    private func pull<Sink: FrameSink>(from ring: FrameRing, into sink: inout Sink, offset: Int, frameCount n: Int, seq: Int64) -> Int {
        var done = 0
        var missing = 0
        var waited: Int64 = 0
        while done < n {
            let want = seq + Int64(done)
            // Read the fill before the mark: data pushed after a mark never counts as old.
            var available = ring.availableFrames
            let oldLimit = adoptIfDue(seq: want, oldAvailable: available, ring: ring)
            if oldLimit == .max { available = ring.availableFrames }
            if activeEpoch < 0 {
                zero(&sink, offset + done, n - done)
                return missing
            }
            if ringSeq < want {
                // Passed already (an xrun, a late start): drop up to here.
                let k = ring.pop(into: nil, frameCount: Int(min(want - ringSeq, Int64(min(available, oldLimit)))))
                ringSeq += Int64(k)
                if ringSeq < want {
                    if waitForDisk(&waited) { continue }
                    zero(&sink, offset + done, n - done)
                    if activeEpoch == wantedEpoch { missing += n - done }
                    return missing
                }
                continue
            }
            if ringSeq > want {
                let k = Int(min(ringSeq - want, Int64(n - done)))
                zero(&sink, offset + done, k)
                done += k
                continue
            }
            let take = min(n - done, available, oldLimit)
            if take > 0 {
                let got = ring.pop(into: &sink, frameCount: take, destinationOffset: offset + done)
                ringSeq += Int64(got)
                done += got
                continue
            }
            if oldLimit == 0 {
                // At a switch point the disk has not answered yet (the mix's time-pitch path
                // reads ahead of the playhead and can get there early): wait where waiting is
                // allowed, otherwise play silence and count it, never spin.
                if waitForDisk(&waited) { continue }
                zero(&sink, offset + done, n - done)
                missing += n - done
                return missing
            }
            if waitForDisk(&waited) { continue }
            zero(&sink, offset + done, n - done)
            if activeEpoch == wantedEpoch { missing += n - done }
            return missing
        }
        return missing
    }

    /// Audio thread: sleeps half a millisecond when waiting is allowed and the budget lasts.
    @inline(__always)
    private func waitForDisk(_ waited: inout Int64) -> Bool {
        guard waitNanoseconds > 0, waited < waitNanoseconds else { return false }
        sleepNanoseconds(500_000)
        waited += 500_000
        return true
    }

    @inline(__always)
    private func zero<Sink: FrameSink>(_ sink: inout Sink, _ offset: Int, _ count: Int) {
        guard count > 0 else { return }
        sink.silence(at: offset, count: count)
    }

    // MARK: - Straight from the files (a freewheeling export)

    /// Whether the seek asked for is served and taken up, with no switch under way: from here
    /// the disk side pushes nothing more, and what the ring holds is played out first.
    private var inStep: Bool {
        streamer != nil && activeEpoch >= 0 && activeEpoch == wantedEpoch && activeEpoch == servedEpoch && !switchPending
            && pendingSwitchSeq == nil
    }

    /// Whether the ring is done with (empty, in step) and the next frame is `seq`: the regions
    /// can be decoded straight into the strip.
    private func decodesDirect(seq: Int64) -> Bool {
        guard let ring, inStep, ring.availableFrames == 0 else { return false }
        return ringSeq == seq && pushedSeq == seq
    }

    /// `frameCount` frames from the disk side's cursor straight into `channels` (round the
    /// loop as the route goes), both sides moved on as if they went through the ring. A file
    /// that fails plays as silence (and is told at the next fill).
    private func decode(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int, frameCount n: Int) -> Int {
        guard let streamer else { return 0 }
        var done = 0
        while done < n {
            let k = Int(min(Int64(min(n - done, streamer.blockFrames)), diskRoute.framesUntilWrap(from: diskCursor)))
            do { try streamer.render(start: diskCursor, frameCount: k, into: channels, offset: offset + done) } catch {
                directFailure = error.description
                for ch in 0..<channelCount { (channels[ch] + offset + done).update(repeating: 0, count: k) }
            }
            diskCursor = diskRoute.advance(diskCursor, by: Int64(k))
            pushedSeq += Int64(k)
            ringSeq += Int64(k)
            done += k
        }
        decodedDirectFrames.add(Int64(n), ordering: .relaxed)
        return 0
    }

    /// A file that failed while decoded straight, told by the next ``service(maxBlocks:fail:)``.
    private var directFailure: String?
    /// Frames decoded straight into the strip so far (for tests). Any thread.
    let decodedDirectFrames = Atomic<Int64>(0)

    // MARK: - Disk thread

    /// Answers a new seek and tops the ring up, at most `maxBlocks` blocks. Returns whether
    /// it did anything. A file that fails mid-way is reported through `fail` and plays as silence.
    ///
    /// Disk thread: reads files, may allocate.
    func service(maxBlocks: Int = .max, fail: (String) -> Void) -> Bool {
        guard let ring, let streamer else { return false }
        if let failure = directFailure {
            directFailure = nil
            fail(failure)
        }
        // Decoded straight into the strip from here on: nothing more goes into the ring (unless
        // the strip, out of step with it, could not take over from where it stops).
        if readsDirect && inStep && (ring.availableFrames > 0 || ringSeq == pushedSeq) { return false }
        var worked = false
        if requests.read(into: diskScratch), diskScratch[0] > max(servedEpoch, switchPending ? nextEpoch : -1) {
            let epoch = diskScratch[0], seqStart = diskScratch[1], timeline = diskScratch[2]
            let route = PlayRoute(loopStart: diskScratch[3], loopEnd: diskScratch[4], loops: diskScratch[5] & 1 != 0)
            let continuesOld = diskScratch[5] & 2 != 0 && servedEpoch >= 0
            nextEpoch = epoch
            nextRoute = route
            nextTimeline = timeline
            switchSeq = seqStart
            switchPending = true
            if !continuesOld || pushedSeq >= seqStart { publishSwitch(ring) }
            worked = true
        }
        // The ring is kept a block short of full, and a switch's first block may use that
        // block. Why: a loop set while rolling keeps the old material up to its switch point,
        // and what the ring holds past that point is only skipped when the switch point is
        // played; a ring full of it had no room for the loop's start until then, so a loop
        // ending a few periods ahead played silence after its wrap until the disk caught up
        // (31 frames at 64-frame periods; RenderAheadTests).
        var blocks = 0
        while ring.freeFrames >= streamer.blockFrames + (pushedSeq - publishedSeq < Int64(streamer.blockFrames) ? 0 : reserveFrames)
                && blocks < maxBlocks {
            blocks += 1
            var k = Int64(streamer.blockFrames)
            if switchPending {
                // Old material up to the switch point first, then the switch.
                if pushedSeq >= switchSeq { publishSwitch(ring); continue }
                k = min(k, switchSeq - pushedSeq)
            }
            guard servedEpoch >= 0 else { break }
            k = min(k, diskRoute.framesUntilWrap(from: diskCursor))
            do { try streamer.render(start: diskCursor, frameCount: Int(k)) } catch {
                fail(error.description)
                for ch in 0..<streamer.channelCount { streamer.output[ch].update(repeating: 0, count: Int(k)) }
            }
            ring.push(streamer.output, frameCount: Int(k))
            pushedSeq += k
            diskCursor = diskRoute.advance(diskCursor, by: k)
            worked = true
        }
        return worked
    }

    /// Disk thread: from here on the ring holds the pending seek's material.
    private func publishSwitch(_ ring: FrameRing) {
        let index = ring.writePosition
        let epoch = nextEpoch, seq = switchSeq
        marks.post { set in set(0, epoch); set(1, index); set(2, seq) }
        servedEpoch = nextEpoch
        diskRoute = nextRoute
        diskCursor = nextTimeline
        pushedSeq = switchSeq
        publishedSeq = switchSeq
        switchPending = false
    }

    /// Fill of the ring, 0…1 (1 for a voice with nothing to stream). Any thread.
    var fill: Double {
        guard let ringRef else { return 1 }
        return ringRef._withUnsafeGuaranteedRef { min(1, Double($0.availableFrames) / Double(max(1, $0.capacityFrames - reserveFrames))) }
    }

    /// The ring's room kept for a switch's first block (see ``service(maxBlocks:fail:)``).
    private var reserveFrames: Int { streamer?.blockFrames ?? 0 }
}
