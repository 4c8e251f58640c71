/// How a lane is stored in `session.json`: compactly, as `{"parameter": "gain", "mode": "play",
/// "points": "0 -200;48000 0 e;…"}` — each point `FRAME VALUE`, ` e` after an exponential one,
/// `;` between points. A million points read in a fraction of a second (one string, scanned
/// once), where an array of objects took seconds through the JSON decoder.
extension AutomationLane: Codable {
    private enum CodingKeys: String, CodingKey { case parameter, mode, points }

    /// Decodes a lane; a bad parameter, mode or point is named.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let text = try c.decode(String.self, forKey: .parameter)
        let parsed: AutomationParameter
        do { parsed = try AutomationParameter.parse(text) } catch {
            throw DecodingError.dataCorruptedError(forKey: .parameter, in: c, debugDescription: error.description)
        }
        let word = try c.decodeIfPresent(String.self, forKey: .mode) ?? "play"
        guard let m = AutomationMode(rawValue: word) else {
            throw DecodingError.dataCorruptedError(forKey: .mode, in: c, debugDescription: "'\(word)' is not off, play, touch, latch or write")
        }
        let pointsText = try c.decodeIfPresent(String.self, forKey: .points) ?? ""
        let points: [AutomationPoint]
        do { points = try AutomationLane.parsePoints(pointsText) } catch {
            throw DecodingError.dataCorruptedError(forKey: .points, in: c, debugDescription: error.description)
        }
        self.init(parameter: parsed, mode: m, sortedPoints: points)
    }

    /// Encodes the lane compactly (see the type's note).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(parameter.description, forKey: .parameter)
        try c.encode(mode.rawValue, forKey: .mode)
        try c.encode(AutomationLane.pointsText(points), forKey: .points)
    }

    /// `FRAME VALUE[ e];…`.
    public static func pointsText(_ points: [AutomationPoint]) -> String {
        var out = ""
        out.reserveCapacity(points.count * 16)
        for (i, p) in points.enumerated() {
            if i > 0 { out += ";" }
            out += String(p.frame)
            out += " "
            out += p.value == p.value.rounded() && abs(p.value) < 1e15 ? String(Int64(p.value)) : "\(p.value)"
            if p.curve == .exponential { out += " e" }
        }
        return out
    }

    /// Reads `FRAME VALUE[ e];…`; points must rise in frame. Throws naming the first bad point.
    /// One pass over the bytes (a million points in a session must open in well under a
    /// second: splitting into strings took most of it).
    static func parsePoints(_ text: String) throws(AutomationError) -> [AutomationPoint] {
        var out: [AutomationPoint] = []
        if text.isEmpty { return out }
        var bytes = Array(text.utf8)
        bytes.append(0)
        let failure: AutomationError? = bytes.withUnsafeMutableBufferPointer { buffer -> AutomationError? in
            guard let base = buffer.baseAddress else { return nil }
            let end = buffer.count - 1
            var i = 0
            var index = 0
            var previous = Int64.min
            func skipSpaces() { while i < end && base[i] == UInt8(ascii: " ") { i += 1 } }
            func bad() -> AutomationError { AutomationError("point \(index + 1) is not 'FRAME VALUE' or 'FRAME VALUE e'") }
            while i < end {
                skipSpaces()
                // The frame: digits, a sign allowed (refused below when negative).
                var negative = false
                if base[i] == UInt8(ascii: "-") { negative = true; i += 1 }
                var frame: Int64 = 0
                var digits = 0
                while i < end, base[i] >= UInt8(ascii: "0"), base[i] <= UInt8(ascii: "9") {
                    let (m, o1) = frame.multipliedReportingOverflow(by: 10)
                    let (a, o2) = m.addingReportingOverflow(Int64(base[i] - UInt8(ascii: "0")))
                    if o1 || o2 { return AutomationError("point \(index + 1): the frame is too large") }
                    frame = a
                    i += 1
                    digits += 1
                }
                guard digits > 0, i < end, base[i] == UInt8(ascii: " ") else { return bad() }
                if negative { frame = -frame }
                skipSpaces()
                // The value: strtod on the bytes as they are (the buffer ends in a NUL).
                var stop: UnsafeMutablePointer<CChar>?
                let start = UnsafeMutableRawPointer(base + i).assumingMemoryBound(to: CChar.self)
                let value = strtod(start, &stop)
                guard let stop, stop != start else { return bad() }
                i += start.distance(to: stop)
                guard value.isFinite else { return bad() }
                skipSpaces()
                var curve = AutomationCurve.linear
                if i < end && base[i] == UInt8(ascii: "e") {
                    curve = .exponential
                    i += 1
                    skipSpaces()
                }
                guard i == end || base[i] == UInt8(ascii: ";") else { return bad() }
                if i < end { i += 1 }
                guard frame > previous else { return AutomationError("point \(index + 1): frame \(frame) is not after the point before") }
                previous = frame
                out.append(AutomationPoint(frame: frame, value: value, curve: curve))
                index += 1
            }
            return nil
        }
        if let failure { throw failure }
        return out
    }
}

extension AutomationLane {
    /// A lane of points already in order, one per frame (decoding: checked by the parser).
    init(parameter: AutomationParameter, mode: AutomationMode, sortedPoints: [AutomationPoint]) {
        self.init(parameter: parameter, mode: mode)
        replacePoints(sortedPoints)
    }
}

#if canImport(Glibc)
import Glibc
#endif
