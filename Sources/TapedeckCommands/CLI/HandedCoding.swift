import TapedeckCore
import TapedeckIO

// How the values handed commands hold travel as JSON (``HandedCommand``): each as the text
// the command line gives it, read back by the same code that reads that text.

/// A session folder travels as its path (absolute: the asker made it so).
extension SessionFolder: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(path: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(path)
    }
}

/// A parameter travels as it is typed and stored (`gain`, `send:Reverb`, `lpf.cutoff`).
extension AutomationParameter: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do { self = try AutomationParameter.parse(text) } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
