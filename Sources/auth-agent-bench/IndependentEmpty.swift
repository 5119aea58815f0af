import Foundation

/// The second yardstick for start-up: an empty Foundation program that is not the bench's own —
/// exactly `import Foundation; print("", terminator: "")`, compiled by `swiftc -O -static-stdlib`
/// here, at bench time, not by this package. Compiled rather than a target of the package so that
/// nothing in `Package.swift` (its flags, its linker, its rpath) can make the yardstick faster or
/// slower: it is the program anyone gets from the toolchain. `auth-agent-empty`, built with the
/// agent's own flags and answering each line with `{}`, stays the first yardstick; a figure is
/// printed beside both so nobody tunes to one.
///
/// The third, `floor`, is compiled the same way: a program that does nothing but use, once each, the
/// libraries the agent may link (FoundationEssentials' `Date` and `URL`, a `String` search, a Dispatch
/// queue) — the start any program built on them pays before reading a byte of configuration, so a
/// helper's figure beside it is what the agent itself costs.
struct IndependentEmpty: Sendable {
    let name: String
    let source: String

    static let foundation = IndependentEmpty(name: "auth-agent-empty-independent", source: "import Foundation\nprint(\"\", terminator: \"\")\n")
    static let floor = IndependentEmpty(name: "auth-agent-floor", source: """
        import FoundationEssentials
        import Dispatch
        let now = Date()
        let url = URL(string: "https://example.com/x")
        let name = CommandLine.arguments.first ?? ""
        DispatchQueue(label: "floor").sync {
            print(now.timeIntervalSince1970 > 0 && url != nil && !name.contains("zzz") ? "" : "x", terminator: "")
        }

        """)

    /// The program's path, compiled beside the agent on first use (as `name`);
    /// nil, with the reason on stderr, when no `swiftc` is on the PATH or it fails.
    func build(beside agentPath: String) -> String? {
        let directory = URL(fileURLWithPath: agentPath).deletingLastPathComponent()
        let binary = directory.appendingPathComponent(name).path
        let sourceFile = directory.appendingPathComponent(name + ".swift")
        // Rebuilt when the source differs, e.g. a copy left by another toolchain is replaced by hand.
        if FileManager.default.isExecutableFile(atPath: binary), (try? String(contentsOf: sourceFile, encoding: .utf8)) == source {
            return binary
        }
        guard let swiftc = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
            .map({ "\($0)/swiftc" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else {
            FileHandle.standardError.write(Data("auth-agent-bench: no swiftc on the PATH: \(name) is not measured\n".utf8))
            return nil
        }
        do {
            try Data(source.utf8).write(to: sourceFile)
            let compile = Process()
            compile.executableURL = URL(fileURLWithPath: swiftc)
            compile.arguments = ["-O", "-static-stdlib", sourceFile.path, "-o", binary]
            try compile.run()
            compile.waitUntilExit()
            guard compile.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
            return binary
        } catch {
            try? FileManager.default.removeItem(atPath: sourceFile.path)
            FileHandle.standardError.write(Data("auth-agent-bench: swiftc -O -static-stdlib failed: \(name) is not measured\n".utf8))
            return nil
        }
    }
}
