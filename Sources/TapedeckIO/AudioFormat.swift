import CSndfile

/// Container of a file Tapedeck writes.
public enum AudioContainer: String, Sendable, CaseIterable {
    /// RIFF WAVE; written as RF64 with auto-downgrade, so it stays plain WAV below 4 GB.
    case wav
    /// FLAC (16 or 24-bit only).
    case flac
    /// MPEG-1/2 Layer III through libsndfile's LAME encoder (exports only; `encoding` is
    /// not used: the encoder takes floats).
    case mp3
    /// Opus in Ogg through libsndfile (exports only; 8, 12, 16, 24 or 48 kHz: other rates
    /// are resampled to 48 kHz as they are written).
    case opus

    /// The take container a path's extension names (`.wav`, `.flac`), if Tapedeck records it.
    public init?(pathExtension path: String) {
        let lower = path.lowercased()
        if lower.hasSuffix(".wav") { self = .wav } else if lower.hasSuffix(".flac") { self = .flac } else { return nil }
    }

    /// The container an export's path names: a take's, or `.mp3`, `.opus` (or `.ogg`, as
    /// Opus).
    public init?(exportExtension path: String) {
        let lower = path.lowercased()
        if let take = AudioContainer(pathExtension: lower) {
            self = take
        } else if lower.hasSuffix(".mp3") {
            self = .mp3
        } else if lower.hasSuffix(".opus") || lower.hasSuffix(".ogg") {
            self = .opus
        } else {
            return nil
        }
    }

    /// Lossy formats for publishing: exports only, never a take.
    public var isLossy: Bool { self == .mp3 || self == .opus }
}

/// How a lossy export is encoded (`export --bitrate`, `--quality`).
public enum EncoderSetting: Equatable, Sendable {
    /// A constant bit rate (MP3), or Opus's target bit rate, kbit/s for the whole file.
    case bitrate(kbps: Int)
    /// Variable bit rate at a quality from 0 (best, largest) to 10 (smallest): LAME's V0…V9
    /// for MP3; for Opus, libsndfile's compression level (a lower target bit rate).
    case quality(Double)

    /// What an export gets unless told: 128 kbit/s for mono (speech, a podcast), 192 for
    /// stereo in MP3; Opus, which does as well at half the rate, 64 and 128.
    public static func standard(for container: AudioContainer, channelCount: Int) -> EncoderSetting {
        let mono = channelCount == 1
        return container == .opus ? .bitrate(kbps: mono ? 64 : 128) : .bitrate(kbps: mono ? 128 : 192)
    }
}

/// Sample encoding of a file Tapedeck writes.
public enum SampleEncoding: String, Sendable, CaseIterable {
    /// 16-bit integer PCM.
    case int16 = "16"
    /// 24-bit integer PCM.
    case int24 = "24"
    /// 32-bit IEEE float.
    case float32 = "32f"

    /// Bits per sample as stored.
    public var bits: Int {
        switch self {
        case .int16: 16
        case .int24: 24
        case .float32: 32
        }
    }
}

/// What a new file is: container, encoding, rate, channels.
public struct AudioFileFormat: Equatable, Sendable {
    /// WAV or FLAC.
    public var container: AudioContainer
    /// Sample encoding.
    public var encoding: SampleEncoding
    /// Frames per second.
    public var sampleRate: Int
    /// Channel count.
    public var channelCount: Int
    /// MP3 and Opus: the bit rate or quality (nil: ``EncoderSetting/standard(for:channelCount:)``).
    public var encoder: EncoderSetting?

    /// Creates a format. Use ``validate()`` before writing.
    public init(container: AudioContainer, encoding: SampleEncoding, sampleRate: Int, channelCount: Int,
                encoder: EncoderSetting? = nil) {
        self.container = container
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.encoder = encoder
    }

    /// MPEG Layer III's sample rates (MPEG-1, 2 and 2.5).
    static let mp3Rates: Set<Int> = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000]
    /// The rates an Opus stream is coded at; others are resampled to 48 kHz.
    static let opusRates: Set<Int> = [8000, 12000, 16000, 24000, 48000]

    /// The rate the file holds: the asked rate, or 48 kHz for Opus at another.
    var storedSampleRate: Int { container == .opus && !AudioFileFormat.opusRates.contains(sampleRate) ? 48000 : sampleRate }

    /// Why this format cannot be written, or nil when it can.
    public func problem() -> String? {
        if container == .flac && encoding == .float32 { return "FLAC stores 16 or 24-bit integers, not 32-bit float" }
        if sampleRate < 1000 || sampleRate > 768_000 { return "sample rate \(sampleRate) Hz is out of range" }
        if channelCount < 1 || channelCount > 256 { return "channel count \(channelCount) is out of range" }
        if container == .flac && channelCount > 8 { return "FLAC holds at most 8 channels" }
        if container == .mp3 && channelCount > 2 { return "an MP3 holds one or two channels" }
        if container == .mp3 && !AudioFileFormat.mp3Rates.contains(sampleRate) {
            return "MP3 is coded at 8 to 48 kHz (32, 44.1 or 48 kHz for full bandwidth), not \(sampleRate) Hz"
        }
        if container == .opus && channelCount > 8 { return "an Opus file made here holds at most 8 channels" }
        switch encoder {
        case .bitrate(let kbps)? where container == .mp3 && !(8...320).contains(kbps):
            return "an MP3's bit rate is 8 to 320 kbit/s, not \(kbps)"
        case .bitrate(let kbps)? where container == .opus && !(6 * channelCount...256 * channelCount).contains(kbps):
            return "an Opus file's bit rate is 6 to 256 kbit/s a channel (\(6 * channelCount) to \(256 * channelCount) here), not \(kbps)"
        case .quality(let q)? where !(0...10).contains(q):
            return "the encoder's quality is 0 (best) to 10 (smallest), not \(q)"
        default: break
        }
        return nil
    }

    /// The libsndfile format word for plain RIFF WAV of this encoding.
    var classicWAVFormat: Int32 { Int32(SF_FORMAT_WAV) | (sndfileFormat & Int32(SF_FORMAT_SUBMASK)) }

    /// The libsndfile format word for WAV with the extensible header (which states channel
    /// positions) of this encoding.
    var extensibleWAVFormat: Int32 { Int32(SF_FORMAT_WAVEX) | (sndfileFormat & Int32(SF_FORMAT_SUBMASK)) }

    /// The libsndfile format word.
    var sndfileFormat: Int32 {
        if container == .mp3 { return Int32(SF_FORMAT_MPEG) | Int32(SF_FORMAT_MPEG_LAYER_III) }
        if container == .opus { return Int32(SF_FORMAT_OGG) | Int32(SF_FORMAT_OPUS) }
        let major: Int32 = container == .wav ? Int32(SF_FORMAT_RF64) : Int32(SF_FORMAT_FLAC)
        let minor: Int32
        switch encoding {
        case .int16: minor = Int32(SF_FORMAT_PCM_16)
        case .int24: minor = Int32(SF_FORMAT_PCM_24)
        case .float32: minor = Int32(SF_FORMAT_FLOAT)
        }
        return major | minor
    }
}
