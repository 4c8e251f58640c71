import CSndfile

/// Container of a file Tapedeck writes.
public enum AudioContainer: String, Sendable, CaseIterable {
    /// RIFF WAVE; written as RF64 with auto-downgrade, so it stays plain WAV below 4 GB.
    case wav
    /// FLAC (16 or 24-bit only).
    case flac

    /// The container a path's extension names, if Tapedeck writes it.
    public init?(pathExtension path: String) {
        let lower = path.lowercased()
        if lower.hasSuffix(".wav") { self = .wav } else if lower.hasSuffix(".flac") { self = .flac } else { return nil }
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

    /// Creates a format. Use ``validate()`` before writing.
    public init(container: AudioContainer, encoding: SampleEncoding, sampleRate: Int, channelCount: Int) {
        self.container = container
        self.encoding = encoding
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// Why this format cannot be written, or nil when it can.
    public func problem() -> String? {
        if container == .flac && encoding == .float32 { return "FLAC stores 16 or 24-bit integers, not 32-bit float" }
        if sampleRate < 1000 || sampleRate > 768_000 { return "sample rate \(sampleRate) Hz is out of range" }
        if channelCount < 1 || channelCount > 256 { return "channel count \(channelCount) is out of range" }
        if container == .flac && channelCount > 8 { return "FLAC holds at most 8 channels" }
        return nil
    }

    /// The libsndfile format word for plain RIFF WAV of this encoding.
    var classicWAVFormat: Int32 { Int32(SF_FORMAT_WAV) | (sndfileFormat & Int32(SF_FORMAT_SUBMASK)) }

    /// The libsndfile format word for WAV with the extensible header (which states channel
    /// positions) of this encoding.
    var extensibleWAVFormat: Int32 { Int32(SF_FORMAT_WAVEX) | (sndfileFormat & Int32(SF_FORMAT_SUBMASK)) }

    /// The libsndfile format word.
    var sndfileFormat: Int32 {
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
