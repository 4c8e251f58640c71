import TapedeckCore
import TapedeckDSP

/// A chain that could not be read, with where it came from (`track 2 (Bass) chain`,
/// `master chain`) in front of the chain error's own pointer into the text.
public struct ChainContextError: Error, CustomStringConvertible {
    /// Which chain.
    public var place: String
    /// What is wrong with it.
    public var error: ChainError

    /// Creates the error.
    public init(place: String, error: ChainError) {
        self.place = place
        self.error = error
    }

    public var description: String { "\(place.terminalSafe): \(error.description)" }
}
