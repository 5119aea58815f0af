/// A problem in the configuration file, located precisely enough to fix it
/// without guessing: `config.json: $.providers[1].origins[0]: <problem>`.
///
/// `path` is a JSONPath-like location (`$` is the whole document). Problems
/// name keys and expected kinds and quote URLs or ids, never secret values such
/// as `clientSecret`.
public struct ConfigError: Error, Sendable, Equatable, CustomStringConvertible {
    public let file: String
    public let path: String
    public let problem: String

    public init(file: String, path: String, problem: String) {
        self.file = file
        self.path = path
        self.problem = problem
    }

    public var description: String { "\(file): \(path): \(problem)" }
}
