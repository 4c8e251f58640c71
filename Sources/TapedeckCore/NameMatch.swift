/// Finding what a user meant by a name: tracks, markers, commands and nodes are matched
/// case-insensitively, and a name that matches nothing suggests the nearest one.
public enum NameMatch {
    /// The index of the first name equal to `name` ignoring case, if any.
    public static func index(of name: String, in names: [String]) -> Int? {
        let key = name.lowercased()
        return names.firstIndex { $0.lowercased() == key }
    }

    /// The known name `name` was most likely meant to be: one it is a prefix of (or that is a
    /// prefix of it), else the closest by edit distance when at most a third of its letters
    /// (and at least 2) differ. Nil when nothing is close.
    public static func nearest(_ name: String, in names: [String]) -> String? {
        let key = name.lowercased()
        guard !key.isEmpty else { return nil }
        if let match = names.first(where: { !$0.isEmpty && (key.hasPrefix($0.lowercased()) || $0.lowercased().hasPrefix(key)) }) {
            return match
        }
        let scored = names.map { ($0, editDistance(key, $0.lowercased())) }.min { $0.1 < $1.1 }
        guard let (match, distance) = scored, distance <= max(2, key.count / 3) else { return nil }
        return match
    }

    /// ` (did you mean 'x'?)` for the nearest known name, or empty.
    public static func suggestion(_ name: String, in names: [String]) -> String {
        nearest(name, in: names).map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// Levenshtein distance.
    public static func editDistance(_ a: String, _ b: String) -> Int {
        let x = Array(a), y = Array(b)
        if x.isEmpty { return y.count }
        if y.isEmpty { return x.count }
        var row = Array(0...y.count)
        for i in 1...x.count {
            var previous = row[0]
            row[0] = i
            for j in 1...y.count {
                let old = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (x[i - 1] == y[j - 1] ? 0 : 1))
                previous = old
            }
        }
        return row[y.count]
    }
}

/// Why a track could not be found by what the user typed; the description is one line.
public struct TrackLookupError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What was typed.
    public var text: String
    /// The whole message.
    public var description: String
}

extension Session {
    /// The track `text` names: a 1-based number, or a name matched ignoring case. An unknown
    /// name suggests the nearest one; a number outside the session says how many there are.
    public func trackIndex(named text: String) throws(TrackLookupError) -> Int {
        let t = text.trimmingWhitespace()
        if !t.isEmpty, t.allSatisfy(\.isASCIIDigit) {
            guard let n = Int(t), n >= 1, n <= tracks.count else {
                throw TrackLookupError(text: text, description: "track \(t) does not exist (the session has \(tracks.count) track\(tracks.count == 1 ? "" : "s"))")
            }
            return n - 1
        }
        let names = tracks.map(\.name)
        if let i = NameMatch.index(of: t, in: names) { return i }
        throw TrackLookupError(text: text, description: "no track named '\(text)'\(NameMatch.suggestion(t, in: names))")
    }

    /// The marker `text` names: a 1-based number in timeline order, or a name ignoring case.
    public func markerIndex(named text: String) throws(TrackLookupError) -> Int {
        let t = text.trimmingWhitespace()
        if !t.isEmpty, t.allSatisfy(\.isASCIIDigit), let n = Int(t), NameMatch.index(of: t, in: markers.map(\.name)) == nil {
            guard n >= 1, n <= markers.count else {
                throw TrackLookupError(text: text, description: "marker \(t) does not exist (the session has \(markers.count) marker\(markers.count == 1 ? "" : "s"))")
            }
            return n - 1
        }
        let names = markers.map(\.name)
        if let i = NameMatch.index(of: t, in: names) { return i }
        throw TrackLookupError(text: text, description: "no marker named '\(text)'\(NameMatch.suggestion(t, in: names))")
    }
}
