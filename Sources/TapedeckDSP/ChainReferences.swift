/// How chain text names node types of a ``NodeTypeProvider`` (`lv2:…`), and the parser for
/// such entries.

/// Where a reference after `PREFIX:` ends, and how canonical text writes one.
///
/// After `lv2:` comes one of:
/// - `<URI>`: anything up to the next `>` (URIs never contain `<` or `>`), for any URI;
/// - a URI written plainly, recognised by its start: `scheme://…` (`http://`, `https://`,
///   `file://`) or `urn:…`. It runs to the first `:` that begins a setting — a piece holding
///   `=` (`gain=6`, `@preset=…`) — or to the end of the entry. So a plain URI cannot hold `=`
///   or `,` (write those in `<…>`), and every setting after it is named;
/// - a short name (letters, digits, `_`, `-`, `.`, `+`): one word, which a bare value may
///   follow (`lv2:amp:6`).
///
/// Values of `@preset=` and `@state=` are a word without `:` or `,`, or anything in `<…>`.
public enum NodeReference {
    /// Whether `text` starts like a plain URI: `scheme://` or `urn:`.
    public static func isPlainURIStart<S: StringProtocol>(_ text: S) -> Bool {
        if text.lowercased().hasPrefix("urn:") { return true }
        guard let colon = text.firstIndex(of: ":"), colon != text.startIndex else { return false }
        let scheme = text[..<colon]
        guard scheme.first!.isLetter, scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else {
            return false
        }
        return text[text.index(after: colon)...].hasPrefix("//")
    }

    /// Whether `name` is a valid short name.
    public static func isShortName<S: StringProtocol>(_ name: S) -> Bool {
        !name.isEmpty && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-.+".contains($0)) }
    }

    /// A node name as chain text writes it: built-in names as they are, `PREFIX:URI` with the
    /// URI in `<…>` when it would not read back plainly.
    public static func text(ofNode node: String) -> String {
        guard let colon = node.firstIndex(of: ":") else { return node }
        let prefix = node[..<colon], identifier = node[node.index(after: colon)...]
        let plain = isPlainURIStart(identifier) && !identifier.hasSuffix(":")
            && !identifier.contains(where: { $0.isWhitespace || ",=<>@".contains($0) })
        return plain ? node : "\(prefix):<\(identifier)>"
    }

    /// `value` as an option value: as it is when it reads back plainly, otherwise in `<…>`.
    public static func quotedIfNeeded(_ value: String) -> String {
        let plain = !value.isEmpty && value.first?.isWhitespace == false && value.last?.isWhitespace == false
            && !value.contains(where: { ":,<>".contains($0) })
        return plain ? value : "<\(value)>"
    }

    /// The `@state=` value in settings text kept verbatim for a missing node type.
    static func stateReference(inSettings text: String) -> String? {
        let parser = ChainParser(text: text, registry: NodeRegistry(types: []))
        for piece in parser.split(0..<parser.characters.count, at: ":") {
            let setting = parser.string(parser.trimmed(piece))
            guard setting.hasPrefix("@state=") else { continue }
            return unquoted(String(setting.dropFirst("@state=".count)))
        }
        return nil
    }

    /// Why a short name shared by several types is not enough.
    static func ambiguity(_ identifiers: [String]) -> String {
        "several installed plugins have this short name (\(identifiers.joined(separator: ", "))); write the URI"
    }

    /// `value` without surrounding spaces and one pair of `<…>`.
    static func unquoted(_ value: String) -> String {
        var v = Substring(value)
        while v.first?.isWhitespace == true { v.removeFirst() }
        while v.last?.isWhitespace == true { v.removeLast() }
        if v.hasPrefix("<") && v.hasSuffix(">") && v.count >= 2 { v = v.dropFirst().dropLast() }
        return String(v)
    }
}

extension ChainParser {
    /// Reads an entry `PREFIX:REFERENCE[:settings]` whose reference starts at `start`.
    func parseProviderEntry(_ provider: any NodeTypeProvider, after start: Int, in range: Range<Int>) throws(ChainError) -> Chain.Entry {
        let rest = trimmed(start..<range.upperBound)
        guard !rest.isEmpty else {
            throw fail(.malformed("expected a plugin URI or short name after '\(provider.prefix):' (`tapedeck nodes --\(provider.prefix)` lists them)"), start)
        }
        let reference: String, referenceRange: Range<Int>, isURI: Bool
        var settingParts: [Range<Int>]
        if characters[rest.lowerBound] == "<" {
            guard let close = rest.first(where: { characters[$0] == ">" }) else {
                throw fail(.malformed("'<' without a closing '>'"), rest.lowerBound)
            }
            referenceRange = rest.lowerBound..<close + 1
            reference = string(rest.lowerBound + 1..<close)
            isURI = true
            let after = trimmed(close + 1..<rest.upperBound)
            if after.isEmpty {
                settingParts = []
            } else {
                guard characters[after.lowerBound] == ":" else {
                    throw fail(.malformed("expected ':' or ',' after the '>'"), after.lowerBound)
                }
                settingParts = split(after.lowerBound + 1..<rest.upperBound, at: ":")
            }
        } else {
            let pieces = split(rest, at: ":")
            if NodeReference.isPlainURIStart(string(rest)) {
                // The URI ends where the first setting (a piece with `=`) begins.
                let first = pieces.indices.dropFirst().first { i in pieces[i].contains { characters[$0] == "=" } } ?? pieces.count
                referenceRange = trimmed(rest.lowerBound..<pieces[first - 1].upperBound)
                settingParts = Array(pieces[first...])
                isURI = true
            } else {
                referenceRange = trimmed(pieces[0])
                settingParts = Array(pieces.dropFirst())
                isURI = false
                if let bad = referenceRange.first(where: { !NodeReference.isShortName(String(characters[$0])) }) {
                    throw fail(.malformed("unexpected '\(characters[bad])' in the short name '\(string(referenceRange))' (write a URI as scheme://…, urn:… or <URI>)"), bad)
                }
            }
            reference = string(referenceRange)
        }
        if let space = referenceRange.first(where: { characters[$0].isWhitespace }) {
            throw fail(.malformed("a URI cannot contain spaces"), space)
        }
        if reference.isEmpty { throw fail(.malformed("empty URI in '<>'"), referenceRange.lowerBound, referenceRange.count) }

        switch provider.resolve(reference, isURI: isURI) {
        case .found(let identifier):
            guard let descriptor = provider.descriptor(identifier: identifier) else {
                throw fail(.unknownPlugin(reference: reference, detail: "cannot be described"), referenceRange.lowerBound, referenceRange.count)
            }
            var entry = Chain.Entry(node: "\(provider.prefix):\(identifier)", settings: [])
            var plain: [Range<Int>] = []
            for part in settingParts {
                let setting = trimmed(part)
                if let at = setting.first, characters[at] == "@" {
                    try parseOption(setting, provider: provider, identifier: identifier, into: &entry)
                } else {
                    plain.append(part)
                }
            }
            entry.settings = try parseSettings(plain, descriptor: descriptor)
            return entry
        case .notInstalled(let identifier):
            for part in settingParts where trimmed(part).isEmpty {
                throw fail(.malformed("empty setting after ':' (write param=value)"), part.lowerBound)
            }
            let verbatim = settingParts.isEmpty ? "" : string(trimmed(settingParts.first!.lowerBound..<settingParts.last!.upperBound))
            return Chain.Entry(node: "\(provider.prefix):\(identifier)", settings: [], unresolvedSettings: verbatim)
        case .ambiguous(let identifiers):
            throw fail(.unknownPlugin(reference: reference, detail: NodeReference.ambiguity(identifiers)),
                       referenceRange.lowerBound, referenceRange.count)
        case .unknown(let why):
            throw fail(.unknownPlugin(reference: reference, detail: why), referenceRange.lowerBound, referenceRange.count)
        }
    }

    /// Reads `@preset=NAME` or `@state=NAME` into `entry`.
    private func parseOption(_ setting: Range<Int>, provider: any NodeTypeProvider, identifier: String,
                             into entry: inout Chain.Entry) throws(ChainError) {
        guard let eq = setting.first(where: { characters[$0] == "=" }) else {
            throw fail(.malformed("write @preset=NAME or @state=NAME"), setting.lowerBound, setting.count)
        }
        let key = string(trimmed(setting.lowerBound..<eq)).lowercased()
        let valueRange = trimmed(eq + 1..<setting.upperBound)
        let value = NodeReference.unquoted(string(valueRange))
        if value.isEmpty { throw fail(.malformed("missing value after '\(key)='"), eq) }
        switch key {
        case "@preset":
            if entry.preset != nil { throw fail(.malformed("'@preset' is set twice"), setting.lowerBound, setting.count) }
            do { entry.preset = try provider.resolvePreset(value, identifier: identifier) } catch {
                throw fail(.malformed(error.message), valueRange.lowerBound, valueRange.count)
            }
        case "@state":
            if entry.state != nil { throw fail(.malformed("'@state' is set twice"), setting.lowerBound, setting.count) }
            guard !value.contains("/"), value != ".", value != ".." else {
                throw fail(.malformed("a state is named by a folder in the session's plugins/ folder, not a path"), valueRange.lowerBound, valueRange.count)
            }
            entry.state = value
        default:
            throw fail(.malformed("unknown option '\(key)' (plugins take @preset=NAME and @state=NAME)"), setting.lowerBound, eq - setting.lowerBound)
        }
    }
}
