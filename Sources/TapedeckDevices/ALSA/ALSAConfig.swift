import CALSA
import TapedeckEngine
#if canImport(Glibc)
import Glibc
#endif

/// A private ALSA configuration loaded from a file's text, so a program (or a test) can
/// define its own devices without touching `/etc` or `$HOME`.
///
/// `nil` everywhere means "the normal global configuration".
public final class ALSAConfig: @unchecked Sendable {
    /// The file it came from.
    public let path: String
    /// The loaded tree; kept alive as long as any PCM opened through it.
    let handle: OpaquePointer

    /// Loads `path`. Throws ``DeviceError`` when the file is missing or not valid ALSA syntax.
    public init(path: String) throws(DeviceError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw DeviceError(device: path, reason: "cannot read ALSA config: \(String(cString: strerror(errno)))")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            if bytes.count > 16 << 20 { break }
        }
        close(fd)
        var top: OpaquePointer?
        var code = snd_config_top(&top)
        guard code >= 0, let config = top else { throw DeviceError.alsa(path, "cannot create ALSA config", code) }
        var input: OpaquePointer?
        code = bytes.withUnsafeBufferPointer { buf in
            buf.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(buf.count, 1)) {
                snd_input_buffer_open(&input, $0, buf.count)
            }
        }
        guard code >= 0, let inp = input else {
            snd_config_delete(config)
            throw DeviceError.alsa(path, "cannot read ALSA config", code)
        }
        code = snd_config_load(config, inp)
        snd_input_close(inp)
        guard code >= 0 else {
            snd_config_delete(config)
            throw DeviceError.alsa(path, "ALSA config has a syntax error", code)
        }
        handle = config
    }

    deinit { snd_config_delete(handle) }

    /// The config named by `TAPEDECK_ALSA_CONFIG`, or nil for the global one.
    public static func fromEnvironment() throws(DeviceError) -> ALSAConfig? {
        guard let p = getenv("TAPEDECK_ALSA_CONFIG"), p[0] != 0 else { return nil }
        return try ALSAConfig(path: String(cString: p))
    }

    /// Names of the PCMs this config defines (`pcm.NAME` blocks).
    public var pcmNames: [String] {
        var node: OpaquePointer?
        guard snd_config_search(handle, "pcm", &node) >= 0, let pcms = node else { return [] }
        var names: [String] = []
        var it = snd_config_iterator_first(pcms)
        let end = snd_config_iterator_end(pcms)
        while it != end {
            if let entry = snd_config_iterator_entry(it) {
                var id: UnsafePointer<CChar>?
                if snd_config_get_id(entry, &id) >= 0, let id { names.append(String(cString: id)) }
            }
            it = snd_config_iterator_next(it)
        }
        return names
    }
}
