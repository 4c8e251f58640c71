import CLiblo
#if canImport(Glibc)
import Glibc
#endif

/// One OSC argument, as Tapedeck reads and writes them.
public enum OSCValue: Equatable, Sendable {
    case int(Int32)
    case float(Float)
    case int64(Int64)
    case double(Double)
    case string(String)
    /// `T` and `F`.
    case bool(Bool)
    /// Any other type (its tag): carried so a message is not misread, never acted on.
    case other(UInt8)
}

/// One OSC message: an address and its arguments.
public struct OSCMessage: Equatable, Sendable {
    /// `/strip/gain`.
    public var path: String
    /// The arguments in order.
    public var arguments: [OSCValue]

    /// A message for `path` with `arguments`.
    public init(_ path: String, _ arguments: [OSCValue] = []) {
        self.path = path
        self.arguments = arguments
    }
}

/// The OSC wire format, through liblo: a datagram to messages (a bundle's elements in
/// order) and a message to bytes. Anything malformed decodes to nothing; it is never trusted
/// further than its checked length.
public enum OSCPacket {
    /// Bundles nested deeper than this are dropped (a hostile packet could nest thousands).
    public static let maximumBundleDepth = 4
    /// The type tags liblo decodes whose sizes it knows. A packet with any other tag is
    /// dropped before liblo sees it, so an unknown tag can never be read past its bytes.
    static let knownTags = Set("ifsSbhtdcmTFNI".utf8)

    /// The messages in `datagram` (empty when it is malformed).
    public static func decode(_ datagram: [UInt8]) -> [OSCMessage] {
        var out: [OSCMessage] = []
        decode(datagram[...], depth: 0, into: &out)
        return out
    }

    private static func decode(_ bytes: ArraySlice<UInt8>, depth: Int, into out: inout [OSCMessage]) {
        guard bytes.count >= 8, bytes.count % 4 == 0 else { return }
        if bytes.starts(with: Array("#bundle".utf8) + [0]) {
            guard depth < maximumBundleDepth, bytes.count >= 16 else { return }
            // "#bundle\0", an 8-byte time tag (ignored: everything is carried out at once,
            // as Ardour does), then elements each preceded by their big-endian size.
            var at = bytes.startIndex + 16
            while at + 4 <= bytes.endIndex {
                let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
                at += 4
                guard size > 0, size % 4 == 0, size <= bytes.endIndex - at else { return }
                decode(bytes[at..<at + size], depth: depth + 1, into: &out)
                at += size
            }
            return
        }
        if let message = decodeMessage(Array(bytes)) { out.append(message) }
    }

    /// One message, checked before liblo reads it: the address is a terminated string
    /// starting with `/`, the type tags are known ones; then liblo checks every argument's
    /// size against the datagram.
    static func decodeMessage(_ bytes: [UInt8]) -> OSCMessage? {
        guard bytes.first == UInt8(ascii: "/"), let pathEnd = bytes.firstIndex(of: 0) else { return nil }
        let tagsAt = (pathEnd + 4) & ~3
        guard tagsAt < bytes.count, bytes[tagsAt] == UInt8(ascii: ","), let tagsEnd = bytes[tagsAt...].firstIndex(of: 0) else { return nil }
        guard bytes[(tagsAt + 1)..<tagsEnd].allSatisfy(knownTags.contains) else { return nil }
        var data = bytes
        return data.withUnsafeMutableBytes { raw -> OSCMessage? in
            var result: Int32 = 0
            guard let m = lo_message_deserialise(raw.baseAddress, raw.count, &result), result == 0 else { return nil }
            defer { lo_message_free(m) }
            guard let path = String(validatingCString: raw.baseAddress!.assumingMemoryBound(to: CChar.self)) else { return nil }
            let count = Int(lo_message_get_argc(m))
            guard let types = lo_message_get_types(m), count >= 0 else { return nil }
            guard count == 0 || lo_message_get_argv(m) != nil else { return nil }
            let argv = lo_message_get_argv(m)
            var arguments: [OSCValue] = []
            arguments.reserveCapacity(count)
            for i in 0..<count {
                let tag = UInt8(bitPattern: types[i])
                // T and F carry no bytes: liblo may give them no lo_arg.
                if tag == UInt8(ascii: "T") || tag == UInt8(ascii: "F") {
                    arguments.append(.bool(tag == UInt8(ascii: "T")))
                    continue
                }
                guard let arg = argv?[i] else {
                    arguments.append(.other(tag))
                    continue
                }
                arguments.append(value(tag: tag, arg))
            }
            return OSCMessage(path, arguments)
        }
    }

    private static func value(tag: UInt8, _ arg: UnsafeMutablePointer<lo_arg>) -> OSCValue {
        switch tag {
        case UInt8(ascii: "i"): return .int(arg.pointee.i)
        case UInt8(ascii: "f"): return .float(arg.pointee.f)
        case UInt8(ascii: "h"): return .int64(arg.pointee.h)
        case UInt8(ascii: "d"): return .double(arg.pointee.d)
        case UInt8(ascii: "s"), UInt8(ascii: "S"):
            // liblo lays a string out where its lo_arg points, terminated (it checked).
            let text = UnsafeRawPointer(arg).assumingMemoryBound(to: CChar.self)
            return String(validatingCString: text).map { .string($0) } ?? .other(tag)
        case UInt8(ascii: "T"): return .bool(true)
        case UInt8(ascii: "F"): return .bool(false)
        default: return .other(tag)
        }
    }

    /// The datagram for `message` (nil only when liblo cannot allocate).
    public static func encode(_ message: OSCMessage) -> [UInt8]? {
        guard let m = lo_message_new() else { return nil }
        defer { lo_message_free(m) }
        for a in message.arguments {
            switch a {
            case .int(let v): lo_message_add_int32(m, v)
            case .float(let v): lo_message_add_float(m, v)
            case .int64(let v): lo_message_add_int64(m, v)
            case .double(let v): lo_message_add_double(m, v)
            case .string(let v): lo_message_add_string(m, v)
            case .bool(let v): if v { lo_message_add_true(m) } else { lo_message_add_false(m) }
            case .other: lo_message_add_nil(m)
            }
        }
        var size = 0
        guard let raw = lo_message_serialise(m, message.path, nil, &size) else { return nil }
        defer { free(raw) }
        return Array(UnsafeRawBufferPointer(start: raw, count: size))
    }
}
