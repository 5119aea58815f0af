/// Why a stored session record could not be read.
///
/// It names the member at fault and never quotes a value: the values are tokens.
public struct SessionFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    public let problem: String

    public init(_ problem: String) { self.problem = problem }

    public var description: String { "malformed session record: \(problem)" }
}
