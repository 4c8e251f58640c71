import Foundation

/// Seeded, reproducible input generation: case `index` of a run with `seed` is always the
/// same bytes, so any finding is reproduced by its (parser, seed, index) alone.

/// SplitMix64: small, fast, and good enough to drive mutations.
struct FuzzRandom {
    private var state: UInt64

    /// The generator for one case: independent of every other case, so workers can start
    /// anywhere in a run.
    init(seed: UInt64, stream: String, index: Int) {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in stream.utf8 { h = (h ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        state = seed ^ h ^ (UInt64(truncatingIfNeeded: index) &* 0x9E37_79B9_7F4A_7C15)
        _ = next()
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound` (0 when `bound` is 0).
    mutating func below(_ bound: Int) -> Int {
        bound <= 0 ? 0 : Int(next() % UInt64(bound))
    }

    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Byte-level mutations with dictionaries of tokens that matter to the parser at hand.
struct Mutator {
    /// Tokens worth splicing in: separators, units, extremes, and the characters that
    /// broke things before (escape, newline, bidi override, invalid UTF-8).
    var tokens: [[UInt8]]

    static let hostile: [[UInt8]] = [
        Array("9223372036854775807".utf8), Array("-9223372036854775808".utf8), Array("18446744073709551616".utf8),
        Array("1099511627776".utf8), Array("1e308".utf8), Array("-1e308".utf8), Array("1e-320".utf8), Array("NaN".utf8),
        Array("inf".utf8), Array("0".utf8), Array("-1".utf8), Array("10.5".utf8), Array("99999999999999".utf8),
        [0x1B], Array("\u{1B}[2J".utf8), [0x0A], [0x0D], [0x0D, 0x0A], [0x00], [0x7F], [0xC2, 0x9B], Array("\u{202E}".utf8),
        [0xFF], [0xC3], [0xE2, 0x82], Array(String(repeating: "9", count: 40).utf8),
    ]

    /// Case `index` of a run with `seed` for the target `stream`: one of `seeds`, mutated.
    func mutate(oneOf seeds: [String], stream: String, seed: UInt64, index: Int, maxEdits: Int = 4) -> [UInt8] {
        var rng = FuzzRandom(seed: seed, stream: stream, index: index)
        return mutate(Array(rng.pick(seeds).utf8), &rng, maxEdits: maxEdits)
    }

    /// Case `index` of a run with `seed` for the binary target `stream`: one of `seeds`,
    /// damaged in its first `headBytes` (where a file's header lies) `headPercent` times in a
    /// hundred, anywhere (up to eight edits) otherwise.
    func mutate(oneOf seeds: [[UInt8]], stream: String, seed: UInt64, index: Int, headBytes: Int, headPercent: Int) -> [UInt8] {
        var rng = FuzzRandom(seed: seed, stream: stream, index: index)
        let bytes = rng.pick(seeds)
        guard rng.chance(headPercent) else { return mutate(bytes, &rng, maxEdits: 8) }
        return mutate(Array(bytes.prefix(headBytes)), &rng) + bytes.dropFirst(headBytes)
    }

    /// Writes a binary case to `path` (replacing the last one); nil, or why it could not.
    static func writeCase(_ input: [UInt8], to path: String) -> String? {
        unlink(path)
        return FileManager.default.createFile(atPath: path, contents: Data(input)) ? nil : "cannot write the case file"
    }

    /// `base` changed 1…`maxEdits` times.
    func mutate(_ base: [UInt8], _ rng: inout FuzzRandom, maxEdits: Int = 4) -> [UInt8] {
        var out = base
        for _ in 0..<(1 + rng.below(maxEdits)) {
            switch rng.below(7) {
            case 0 where !out.isEmpty:  // flip a byte
                out[rng.below(out.count)] = UInt8(truncatingIfNeeded: rng.next())
            case 1:  // insert a token
                let token = rng.chance(50) ? rng.pick(tokens) : rng.pick(Mutator.hostile)
                out.insert(contentsOf: token, at: rng.below(out.count + 1))
            case 2 where !out.isEmpty:  // delete a run
                let at = rng.below(out.count)
                out.removeSubrange(at..<min(out.count, at + 1 + rng.below(4)))
            case 3 where !out.isEmpty:  // duplicate a run
                let at = rng.below(out.count)
                let run = Array(out[at..<min(out.count, at + 1 + rng.below(8))])
                out.insert(contentsOf: run, at: rng.below(out.count + 1))
            case 4 where !out.isEmpty:  // replace a digit run with an extreme number
                if let (lo, hi) = Mutator.digitRun(in: out, near: rng.below(out.count)) {
                    out.replaceSubrange(lo..<hi, with: rng.pick(Array(Mutator.hostile.prefix(13))))
                }
            case 5 where !out.isEmpty:  // swap in a token at a random place
                let at = rng.below(out.count)
                out.replaceSubrange(at..<min(out.count, at + 1 + rng.below(3)), with: rng.pick(tokens))
            default:  // truncate
                if !out.isEmpty { out.removeSubrange(rng.below(out.count)...) }
            }
            if out.count > 1 << 16 { out.removeSubrange((1 << 16)...) }
        }
        return out
    }

    /// The run of ASCII digits at or after `index`, if any.
    static func digitRun(in bytes: [UInt8], near index: Int) -> (Int, Int)? {
        let isDigit = { (b: UInt8) in b >= 0x30 && b <= 0x39 }
        guard let start = bytes[index...].firstIndex(where: isDigit) ?? bytes[..<index].lastIndex(where: isDigit) else { return nil }
        var lo = start, hi = start
        while lo > 0 && isDigit(bytes[lo - 1]) { lo -= 1 }
        while hi < bytes.count && isDigit(bytes[hi]) { hi += 1 }
        return (lo, hi)
    }
}
