import TapedeckCore

/// Why chain text could not be read, and where: the description names the problem and
/// shows the text with a caret under the offending part.
public struct ChainError: Error, Equatable, CustomStringConvertible, Sendable {
    /// What is wrong.
    public enum Reason: Equatable, Sendable {
        /// No node type has this name.
        case unknownNode(name: String, known: [String])
        /// The node has no parameter with this id.
        case unknownParameter(node: String, parameter: String, known: [String])
        /// The value lies outside the parameter's range.
        case outOfRange(node: String, parameter: String, value: String, minimum: Double, maximum: Double, unit: String)
        /// The value's unit suffix does not fit the parameter.
        case wrongUnit(node: String, parameter: String, value: String, expected: String)
        /// The text breaks the syntax `name:param=value:…,name…`.
        case malformed(String)
        /// A provider's short name (`lv2:amp`) names no installed type, or several; `detail`
        /// says which.
        case unknownPlugin(reference: String, detail: String)
    }

    /// What is wrong.
    public var reason: Reason
    /// The whole chain text.
    public var text: String
    /// 0-based character offset of the offending part within `text`.
    public var offset: Int
    /// Characters the offending part spans (at least 1 for the caret line).
    public var length: Int

    /// Creates an error.
    public init(_ reason: Reason, text: String, offset: Int, length: Int = 1) {
        self.reason = reason
        self.text = text
        self.offset = offset
        self.length = max(length, 1)
    }

    /// The problem in words, without the position.
    public var message: String {
        switch reason {
        case .unknownNode(let name, let known):
            return "unknown node '\(name)'\(Self.suggestion(name, known)) (known: \(known.joined(separator: ", ")))"
        case .unknownParameter(let node, let parameter, let known):
            return "node '\(node)' has no parameter '\(parameter)'\(Self.suggestion(parameter, known)) (it has: \(known.joined(separator: ", ")))"
        case .outOfRange(let node, let parameter, let value, let minimum, let maximum, let unit):
            let u = unit.isEmpty ? "" : " \(unit)"
            return "\(node) \(parameter)=\(value) is out of range \(formatShortest(minimum))…\(formatShortest(maximum))\(u)"
        case .wrongUnit(let node, let parameter, let value, let expected):
            return "\(node) \(parameter)=\(value): \(expected)"
        case .malformed(let why):
            return why
        case .unknownPlugin(let reference, let detail):
            return "'\(reference)': \(detail)"
        }
    }

    /// `chain error at column N: message`, then the text and a caret line under the problem.
    /// Control and invisible formatting characters in the text and the message are shown
    /// escaped (``SafeText``), the caret still under the part they belong to.
    public var description: String {
        let characters = Array(text)
        let start = min(offset, characters.count)
        let end = min(start + length, characters.count)
        let before = SafeText.escaped(String(characters[..<start]))
        let part = SafeText.escaped(String(characters[start..<end]))
        let after = SafeText.escaped(String(characters[end...]))
        let caretPad = String(repeating: " ", count: before.count)
        let carets = String(repeating: "^", count: max(part.count, 1))
        return "chain error at column \(offset + 1): \(SafeText.escaped(message))\n  \(before)\(part)\(after)\n  \(caretPad)\(carets)"
    }

    /// `, did you mean 'x'?` for the nearest known name (``NameMatch/nearest(_:in:)``), or empty.
    static func suggestion(_ name: String, _ known: [String]) -> String {
        NameMatch.nearest(name, in: known).map { ", did you mean '\($0)'?" } ?? ""
    }
}
