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
    static func parsePoints(_ text: String) throws(AutomationError) -> [AutomationPoint] {
        var out: [AutomationPoint] = []
        if text.isEmpty { return out }
        var utf8 = Array(text.utf8)
        utf8.append(UInt8(ascii: ";"))
        var start = 0
        var index = 0
        var previous = Int64.min
        for (k, byte) in utf8.enumerated() where byte == UInt8(ascii: ";") {
            defer { start = k + 1; index += 1 }
            let fields = utf8[start..<k].split(separator: UInt8(ascii: " "), omittingEmptySubsequences: true)
            guard fields.count == 2 || (fields.count == 3 && fields[2].elementsEqual("e".utf8)),
                  let frame = Int64(String(decoding: fields[0], as: UTF8.self)),
                  let value = Double(String(decoding: fields[1], as: UTF8.self)), value.isFinite else {
                throw AutomationError("point \(index + 1) is not 'FRAME VALUE' or 'FRAME VALUE e'")
            }
            guard frame > previous else { throw AutomationError("point \(index + 1): frame \(frame) is not after the point before") }
            previous = frame
            out.append(AutomationPoint(frame: frame, value: value, curve: fields.count == 3 ? .exponential : .linear))
        }
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
