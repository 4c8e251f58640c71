#if canImport(Glibc)
import Glibc
#endif
import CALSA

/// Why a device could not be opened, configured or kept running. The description is one
/// line for the user: the device, what failed and what to try.
public struct DeviceError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The PCM name concerned.
    public var device: String
    /// What went wrong, in words.
    public var reason: String
    /// The negative errno from ALSA, when there was one.
    public var code: Int32

    /// Creates an error for `device`.
    public init(device: String, reason: String, code: Int32 = 0) {
        self.device = device
        self.reason = reason
        self.code = code
    }

    public var description: String { "audio device '\(device)': \(reason)" }

    /// An error for a failed ALSA call: names the call's purpose and explains common codes.
    /// Public for the ALSA backend (TapedeckDevices). Control thread.
    public static func alsa(_ device: String, _ what: String, _ code: Int32) -> DeviceError {
        DeviceError(device: device, reason: "\(what): \(DeviceError.explain(code))", code: code)
    }

    /// Words for an ALSA/errno code, with a hint for the usual suspects.
    public static func explain(_ code: Int32) -> String {
        let text = String(cString: snd_strerror(code))
        switch -code {
        case ENOENT: return "\(text) (no such device; see 'tapedeck devices')"
        case ENODEV: return "\(text) (the device is gone: unplugged or its driver unloaded)"
        case EBUSY: return "\(text) (device busy: another program is using it)"
        case EACCES, EPERM: return "\(text) (permission denied: are you in the 'audio' group?)"
        case EBADFD: return "\(text) (the device is in a bad state)"
        case ETIMEDOUT: return "the device stopped responding (no audio moved for seconds: its server or driver is gone)"
        default: return text
        }
    }

    /// Whether `code` means the device can no longer be used (as opposed to an xrun).
    public static func isFatal(_ code: Int32) -> Bool {
        code < 0 && code != -EPIPE && code != -ESTRPIPE && code != -EINTR && code != -EAGAIN
    }
}
