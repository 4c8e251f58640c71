/// A usage mistake: an unknown flag, a missing value, a bad number. Printed as one line.
struct UsageError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}

/// Tapedeck's own argument parser (no outside packages can be fetched).
///
/// A command declares what it accepts by asking: `flag("--loop")`, `option("--track")`,
/// `positional("SESSION")`. Anything left unasked when ``finish()`` runs is an error, so a
/// misspelt flag is never silently ignored.
struct Arguments {
    private var items: [String]
    private var used: [Bool]
    /// The command's name, for messages.
    let command: String

    init(_ items: [String], command: String) {
        self.items = items
        self.used = Array(repeating: false, count: items.count)
        self.command = command
    }

    /// Whether `names` (e.g. `--loop`) is present; consumes every occurrence.
    mutating func flag(_ names: String...) -> Bool {
        var found = false
        for i in items.indices where !used[i] && names.contains(items[i]) {
            used[i] = true
            found = true
        }
        return found
    }

    /// The value of `--name VALUE` or `--name=VALUE`, the last one when repeated.
    mutating func option(_ names: String...) throws(UsageError) -> String? {
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
        return value
    }

    /// Every value of a repeatable option, in order.
    mutating func options(_ name: String) throws(UsageError) -> [String] {
        var values: [String] = []
        while let v = try optionOnce(name) { values.append(v) }
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
            if items[i].hasPrefix("-") && items[i].count > 1 && Double(items[i]) == nil && !afterDoubleDash(i) { continue }
            used[i] = true
            return items[i]
        }
        return nil
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
        for i in items.indices where !used[i] && items[i] != "--" {
            let item = items[i]
            if item.hasPrefix("-") {
                throw UsageError("\(command): unknown option '\(item)' (see 'tapedeck help \(command)')")
            }
            throw UsageError("\(command): unexpected argument '\(item)'")
        }
    }

    private func afterDoubleDash(_ index: Int) -> Bool {
        items[..<index].contains("--")
    }

    private func format(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }
}
