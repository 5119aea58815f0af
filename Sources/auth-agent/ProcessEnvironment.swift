#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's environment as a dictionary, read straight from `environ`.
///
/// `ProcessInfo.processInfo.environment` gives the same, but setting up the
/// `ProcessInfo` singleton was the largest single cost between `main` and the
/// first request (about a tenth of a cold start, in a profile of the static
/// build). As `getenv` does, the first of duplicate names wins.
enum ProcessEnvironment {
    /// The environment read once (`freeze`, by `main`): the binary never changes its own, and a
    /// one-shot helper asked for it three times — each a dictionary of every variable, 20 % of its
    /// own start-up. Nil in a process that did not freeze it (the tests): read afresh each time.
    nonisolated(unsafe) private static var frozen: [String: String]?

    /// Reads the environment once for the rest of the process; call before starting threads.
    static func freeze() { frozen = read() }

    static func current() -> [String: String] { frozen ?? read() }

    private static func read() -> [String: String] {
        var variables: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.utf8.firstIndex(of: UInt8(ascii: "=")), variables[String(text[..<equals])] == nil {
                variables[String(text[..<equals])] = String(text[text.utf8.index(after: equals)...])
            }
            entry += 1
        }
        return variables
    }
}
