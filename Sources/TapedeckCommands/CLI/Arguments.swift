/// A usage mistake: an unknown flag, a missing value, a bad number. Printed as one line.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}

/// Tapedeck's own argument parser (no outside packages can be fetched).
///
/// The command's ``CommandSpec`` declares what it accepts; its `init` reads the values by
/// asking: `flag("--loop")`, `option("--track")`, `positional()`. Asking for one spelling
/// matches all of the option's spellings, and a choice is checked against its allowed values.
/// Anything left unasked when ``finish()`` runs is an error, so a misspelt flag is never
/// silently ignored; an option the code reads but the table lacks (or the reverse) is caught
/// there too, and by the tests that parse every command.
struct Arguments {
    private var items: [String]
    private var used: [Bool]
    /// The table the command line is checked against.
    let spec: CommandSpec
    /// The command's name, for messages.
    var command: String { spec.name }
    /// The primary names of the options the command's code asked for (the tests compare
    /// them with the table).
    private(set) var asked: Set<String> = []
    /// Names the code asked for that the table does not declare (a programming mistake).
    private(set) var undeclared: [String] = []

    init(_ items: [String], spec: CommandSpec) {
        self.items = items
        self.used = Array(repeating: false, count: items.count)
        self.spec = spec
    }

    /// Every spelling of the declared option one of `names` belongs to; records the question.
    private mutating func spellings(_ names: [String]) -> [String] {
        let spec = self.spec
        guard let declared = names.lazy.compactMap({ spec.option(named: $0) }).first else {
            undeclared += names
            return names
        }
        asked.insert(declared.primaryName)
        return declared.names
    }

    /// Whether `names` (e.g. `--loop`) is present; consumes every occurrence.
    mutating func flag(_ names: String...) -> Bool {
        let names = spellings(names)
        var found = false
        for i in items.indices where !used[i] && names.contains(items[i]) {
            used[i] = true
            found = true
        }
        return found
    }

    /// The value of `--name VALUE` or `--name=VALUE`, the last one when repeated.
    mutating func option(_ names: String...) throws(UsageError) -> String? {
        let names = spellings(names)
        var value: String?
        var i = 0
        while i < items.count {
            defer { i += 1 }
            guard !used[i] else { continue }
            let item = items[i]
            for name in names {
                if item == name {
                    guard i + 1 < items.count, !used[i + 1] else {
                        throw UsageError("\(command): \(name) needs a value")
                    }
                    used[i] = true; used[i + 1] = true
                    value = items[i + 1]
                    i += 1
                } else if item.hasPrefix(name + "=") {
                    used[i] = true
                    value = String(item.dropFirst(name.count + 1))
                }
            }
        }
        if let value { try checkAllowed(value, for: names[0]) }
        return value
    }

    /// A choice outside the table's allowed values is a usage error naming them.
    private func checkAllowed(_ value: String, for name: String) throws(UsageError) {
        // Case is left to the command (`--format WAV` has always been accepted).
        guard let declared = spec.option(named: name), !declared.allowed.isEmpty,
              !declared.allowed.contains(where: { $0.lowercased() == value.lowercased() }) else { return }
        throw UsageError("\(command): \(declared.primaryName) '\(value)' must be \(Arguments.alternatives(declared.allowed))")
    }

    /// `a, b or c`.
    static func alternatives(_ words: [String]) -> String {
        words.count < 2 ? words.joined() : words.dropLast().joined(separator: ", ") + " or " + words.last!
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ name: String) throws(UsageError) -> [String] {
        let name = spellings([name])[0]
        var values: [String] = []
        while let v = try optionOnce(name) {
            try checkAllowed(v, for: name)
            values.append(v)
        }
        return values
    }

    private mutating func optionOnce(_ name: String) throws(UsageError) -> String? {
        for i in items.indices where !used[i] {
            if items[i] == name {
                guard i + 1 < items.count else { throw UsageError("\(command): \(name) needs a value") }
                used[i] = true; used[i + 1] = true
                return items[i + 1]
            }
            if items[i].hasPrefix(name + "=") {
                used[i] = true
                return String(items[i].dropFirst(name.count + 1))
            }
        }
        return nil
    }

    /// An option parsed as a whole number within `range`.
    mutating func intOption(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = try option(name) else { return nil }
        guard let v = Int(text), range.contains(v) else {
            throw UsageError("\(command): \(name) '\(text)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return v
    }

    /// An option parsed as a finite number within `range`.
    mutating func doubleOption(_ name: String, in range: ClosedRange<Double>) throws(UsageError) -> Double? {
        guard let text = try option(name) else { return nil }
        guard let v = Double(text), v.isFinite, range.contains(v) else {
            throw UsageError("\(command): \(name) '\(text)' must be a number in \(format(range.lowerBound))...\(format(range.upperBound))")
        }
        return v
    }

    /// The next unused argument that is not a flag, consumed. `--` ends flags.
    mutating func positional() -> String? {
        for i in items.indices where !used[i] {
            if items[i] == "--" { continue }
            // `-1f`, `-2s`, `-0:01`: a negative value (refused by whoever parses it, saying
            // why), never a flag, since no flag starts with a digit.
            if items[i].hasPrefix("-") && items[i].count > 1 && Double(items[i]) == nil && !afterDoubleDash(i)
                && !Arguments.startsLikeANumber(items[i].dropFirst()) { continue }
            used[i] = true
            return items[i]
        }
        return nil
    }

    /// Whether `rest` (what follows a `-`) starts with a digit or `.digit`.
    static func startsLikeANumber(_ rest: Substring) -> Bool {
        let digit: (Character) -> Bool = { $0.isASCII && $0.isNumber }
        guard let first = rest.first else { return false }
        return digit(first) || (first == "." && rest.dropFirst().first.map(digit) == true)
    }

    /// A required positional argument.
    mutating func required(_ what: String) throws(UsageError) -> String {
        guard let v = positional() else { throw UsageError("\(command): missing \(what)") }
        return v
    }

    /// Every remaining positional argument.
    mutating func remainingPositionals() -> [String] {
        var out: [String] = []
        while let p = positional() { out.append(p) }
        return out
    }

    /// Fails on anything not consumed (an unknown flag or a stray argument).
    func finish() throws(UsageError) {
        if let name = undeclared.first {
            throw UsageError("\(command): internal error: the code reads \(name), which its option table lacks")
        }
        for i in items.indices where !used[i] && items[i] != "--" {
            let item = items[i]
            if item.hasPrefix("-") {
                let name = String(item.prefix { $0 != "=" })
                if spec.option(named: name) != nil {
                    // Declared but never read: the table promises what the code does not do.
                    throw UsageError("\(command): internal error: \(name) is in the option table but not read")
                }
                var hint = "see 'tapedeck help \(command)'"
                if let near = Arguments.nearest(to: name, in: spec.optionNames) { hint = "did you mean \(near)? " + hint }
                throw UsageError("\(command): unknown option '\(item)' (\(hint))")
            }
            throw UsageError("\(command): unexpected argument '\(item)'")
        }
    }

    /// The declared spelling closest to a misspelt one (at most two edits away), if any.
    static func nearest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, editDistance(word, $0)) }.filter { $0.1 <= 2 }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Levenshtein distance between two short words.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var previous = Array(0...b.count)
        for i in 1...max(1, a.count) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(1, b.count) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    private func afterDoubleDash(_ index: Int) -> Bool {
        items[..<index].contains("--")
    }

    private func format(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }
}
