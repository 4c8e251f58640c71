import CSndfile
#if canImport(Glibc)
import Glibc
#endif

/// What a new file says about itself (``TakeMetadata``, ``FileTags``), and how a lossy one is
/// encoded: all of it before the first frame, when libsndfile writes the header.
extension AudioFileWriter {
    /// Stores `m` in the fresh file's header (see ``TakeMetadata`` for where each field goes).
    func store(_ m: TakeMetadata, handle h: OpaquePointer) {
        var problems: [String] = []
        if format.container.isLossy {
            // A published file says what it is, not where a take belongs.
            storeTags(m, handle: h)
            return
        }
        var strings: [(Int32, String)] = [(Int32(SF_STR_TITLE), tags.title ?? m.title), (Int32(SF_STR_COMMENT), m.text),
                                          (Int32(SF_STR_SOFTWARE), "Tapedeck"), (Int32(SF_STR_DATE), m.startedAt)]
        if let artist = tags.artist { strings.append((Int32(SF_STR_ARTIST), artist)) }
        if let album = tags.album { strings.append((Int32(SF_STR_ALBUM), album)) }
        for (kind, value) in strings where !value.isEmpty {
            if sf_set_string(h, kind, value) != 0 { problems.append("string \(kind)") }
        }
        if format.container == .wav {
            var bext = SF_BROADCAST_INFO()
            TakeMetadata.fill(&bext.description, with: m.text, capacity: 255)
            TakeMetadata.fill(&bext.originator, with: "Tapedeck", capacity: 32)
            TakeMetadata.fill(&bext.originator_reference, with: m.session, capacity: 32)
            // BWF wants "yyyy-mm-dd" and "hh:mm:ss"; startedAt is "yyyy-mm-dd hh:mm:ss".
            let stamp = m.startedAt.split(separator: " ")
            if stamp.count == 2 {
                TakeMetadata.fill(&bext.origination_date, with: String(stamp[0]), capacity: 10)
                TakeMetadata.fill(&bext.origination_time, with: String(stamp[1]), capacity: 8)
            }
            let reference = UInt64(max(m.timeReference ?? m.timelineFrame, 0))
            bext.time_reference_low = UInt32(truncatingIfNeeded: reference)
            bext.time_reference_high = UInt32(truncatingIfNeeded: reference >> 32)
            bext.version = 1
            let mode = format.channelCount == 1 ? "mono" : format.channelCount == 2 ? "stereo" : "multitrack"
            let history = "A=PCM,F=\(format.sampleRate),W=\(format.encoding.bits),M=\(mode),T=Tapedeck speed \(m.speed)\r\n"
            TakeMetadata.fill(&bext.coding_history, with: history, capacity: 255)
            bext.coding_history_size = UInt32(min(history.utf8.count, 255))
            if sf_command(h, Int32(SFC_SET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) != SF_TRUE {
                problems.append("bext chunk")
            }
            var xml = Array(m.ixml(sampleRate: format.sampleRate, channelCount: format.channelCount).utf8)
            if xml.count % 2 == 1 { xml.append(0x20) }  // RIFF pads odd chunks; keep the size exact.
            let bytes = UnsafeMutableRawPointer.allocate(byteCount: xml.count, alignment: 1)
            bytes.copyMemory(from: xml, byteCount: xml.count)
            chunkBuffers.append(bytes)
            var chunk = SF_CHUNK_INFO()
            TakeMetadata.setID(&chunk, "iXML")
            chunk.datalen = UInt32(xml.count)
            chunk.data = bytes
            if sf_set_chunk(h, &chunk) != 0 { problems.append("iXML chunk") }
        }
        metadataProblem = problems.isEmpty ? nil : "could not store " + problems.joined(separator: ", ")
    }

    /// The title, artist and album a lossy file carries: the export's tags, else the
    /// metadata's title. Opus gets them as Vorbis comments through libsndfile; an MP3's are
    /// written into its ID3v2 tag on close (``ID3Tag``), so LAME is given none.
    func storeTags(_ m: TakeMetadata?, handle h: OpaquePointer) {
        guard format.container == .opus else { return }
        let t = storedTags(m)
        var problems: [String] = []
        for (kind, value) in [(SF_STR_TITLE, t.title), (SF_STR_ARTIST, t.artist), (SF_STR_ALBUM, t.album),
                              (SF_STR_DATE, m?.startedAt), (SF_STR_SOFTWARE, "Tapedeck")] {
            guard let value, !value.isEmpty else { continue }
            if sf_set_string(h, Int32(kind), value) != 0 { problems.append("the \(FileTags.name(kind)) comment") }
        }
        if !problems.isEmpty { metadataProblem = "could not store " + problems.joined(separator: ", ") }
    }

    /// The tags as stored: the export's, with the metadata's title when none was given.
    func storedTags(_ m: TakeMetadata?) -> FileTags {
        var t = tags
        if t.title == nil, let m { t.title = m.title }
        if t.date == nil, let m, !m.startedAt.isEmpty { t.date = String(m.startedAt.prefix(10)) }
        return t
    }

    /// The tags for the ID3v2 tag written on close.
    var storedTags: FileTags { storedTags(metadata) }

    /// Sets the bit rate or quality (``EncoderSetting``) on a fresh MP3 or Opus file; returns
    /// why it could not be set, or nil. libsndfile maps one "compression level" from 0 (best)
    /// to 1 onto each encoder: MP3 at a constant rate gets 320 − level × 288 kbit/s (truncated),
    /// at a variable one LAME's V(level × 10); Opus gets (1 − level) × 250 + 6 kbit/s a channel.
    func configureEncoder(_ h: OpaquePointer) -> String? {
        let setting = format.encoder ?? EncoderSetting.standard(for: format.container, channelCount: format.channelCount)
        var mode: Int32
        var level: Double
        switch setting {
        case .bitrate(let kbps):
            mode = Int32(SF_BITRATE_MODE_CONSTANT)
            if format.container == .mp3 {
                // Half a kbit/s over, so libsndfile's truncation lands on the rate asked for.
                let top: Double = format.sampleRate >= 32000 ? 320 : format.sampleRate >= 16000 ? 160 : 64
                let bottom: Double = format.sampleRate >= 32000 ? 32 : 8
                level = (top - (Double(kbps) + 0.5)) / (top - bottom)
            } else {
                // Opus's constant rate is VBR constrained to it: a steady stream, as podcast hosts want.
                let perChannel = Double(kbps) * 1000 / Double(format.channelCount)
                level = 1 - (perChannel + 0.5 - 6000) / 250_000
            }
        case .quality(let q):
            mode = Int32(SF_BITRATE_MODE_VARIABLE)
            level = q / 10
        }
        level = min(1, max(0, level))
        // The level first: libsndfile's MP3 encoder re-reads the level it keeps when the mode
        // changes, and refuses the mode while it has none.
        if sf_command(h, Int32(SFC_SET_COMPRESSION_LEVEL), &level, Int32(MemoryLayout<Double>.size)) != SF_TRUE {
            return "the encoder refused its bit rate or quality: \(String(cString: sf_strerror(h)))"
        }
        // Opus in libsndfile 1.2.0 takes no mode (its rate is a target, VBR); MP3 must.
        if sf_command(h, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size)) != SF_TRUE && format.container == .mp3 {
            return "the encoder refused its bit rate mode: \(String(cString: sf_strerror(h)))"
        }
        if format.container == .opus && format.storedSampleRate != format.sampleRate {
            var original = Int32(format.sampleRate)
            sf_command(h, Int32(SFC_SET_ORIGINAL_SAMPLERATE), &original, Int32(MemoryLayout<Int32>.size))
        }
        return nil
    }

    /// Fills the `bext` chunk's EBU loudness fields (version 2) when the file is closed: a
    /// WAV export that measured what it wrote (a normalised one) says so in its header.
    public func setLoudness(_ loudness: BextLoudness) {
        guard format.container == .wav, metadata != nil else { return }
        pendingLoudness = loudness
    }

    /// What is written once libsndfile has closed a WAV: the `bext` loudness, and cue points
    /// past the hundred libsndfile writes.
    func finishMetadata() throws(AudioFileError) {
        guard format.container == .wav else { return }
        do {
            if let pendingLoudness { try TakeFilePatch.setLoudness(path: path, pendingLoudness) }
            if !appendedCues.isEmpty {
                try TakeFilePatch.appendCues(path: path, cues: appendedCues, frameCount: framesWritten, limit: FileCues.maximumExportWAVCues)
            }
        } catch {
            throw AudioFileError(path: path, reason: error.description)
        }
    }
}

/// EBU Tech 3285 v2's loudness fields of a `bext` chunk, in their units (LUFS, LU, dBTP).
public struct BextLoudness: Equatable, Sendable {
    /// Integrated loudness, LUFS.
    public var integratedLUFS: Double
    /// Loudness range, LU.
    public var rangeLU: Double
    /// Maximum true peak, dBTP.
    public var maxTruePeakDecibels: Double
    /// Maximum momentary loudness, LUFS.
    public var maxMomentaryLUFS: Double
    /// Maximum short-term loudness, LUFS.
    public var maxShortTermLUFS: Double

    /// The fields.
    public init(integratedLUFS: Double, rangeLU: Double, maxTruePeakDecibels: Double, maxMomentaryLUFS: Double,
                maxShortTermLUFS: Double) {
        self.integratedLUFS = integratedLUFS
        self.rangeLU = rangeLU
        self.maxTruePeakDecibels = maxTruePeakDecibels
        self.maxMomentaryLUFS = maxMomentaryLUFS
        self.maxShortTermLUFS = maxShortTermLUFS
    }

    /// The five 16-bit fields as stored: each value × 100, rounded; a value not measured
    /// (−∞, silence) as 0x7FFF, which Tech 3285 reserves for "not set".
    var stored: [Int16] {
        [integratedLUFS, rangeLU, maxTruePeakDecibels, maxMomentaryLUFS, maxShortTermLUFS].map { v in
            v.isFinite ? Int16(clamping: Int((v * 100).rounded())) : Int16.max
        }
    }
}

extension TakeFilePatch {
    /// Writes `loudness` into the `bext` chunk of the closed WAV at `path` (bytes 412–421 of
    /// its body) and marks the chunk version 2.
    static func setLoudness(path: String, _ loudness: BextLoudness) throws(Failure) {
        let file = try PatchFile(path: path)
        defer { file.close() }
        guard let bext = try file.chunks().first(where: { $0.id == "bext" }), bext.size >= 422 else {
            throw Failure(description: "\(path): no bext chunk to hold the loudness")
        }
        try file.write([2, 0], at: bext.dataOffset + 346)
        var fields: [UInt8] = []
        for v in loudness.stored { fields += withUnsafeBytes(of: v.littleEndian, Array.init) }
        try file.write(fields, at: bext.dataOffset + 412)
    }
}
