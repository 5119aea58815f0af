import Foundation
import Locking
import XCTest

/// Runs every golden transcript in Tests/Transcripts: those about the process (its arguments,
/// end of input and exit code, signals, stdio framing) against the built binary, the others
/// against the agent wired in this process, whose clock `!advance` moves without waiting.
final class TranscriptTests: XCTestCase {
    /// Transcripts the agent in this process could play by their directives that play against
    /// the binary all the same, and why. Empty: every one of them passes in-process.
    static let onTheBinary: [String: String] = [:]

    /// Whether `file` plays against the agent in this process. `TRANSCRIPT_AGENT=binary` plays every
    /// transcript that does not `!advance` against the binary, to compare the two.
    static func playsInProcess(_ file: URL) throws -> Bool {
        let transcript = try Transcript(text: String(contentsOf: file, encoding: .utf8), file: file.lastPathComponent)
        if ProcessInfo.processInfo.environment["TRANSCRIPT_AGENT"] == "binary" && !transcript.advancesTheClock { return false }
        return transcript.processDirective == nil && onTheBinary[file.deletingPathExtension().lastPathComponent] == nil
    }

    func testEngineTranscripts() throws {
        let files = try TranscriptRunner.allFiles().filter { !$0.lastPathComponent.hasPrefix("auth-") }
        XCTAssertGreaterThanOrEqual(files.count, 6, "engine transcripts are missing")
        try run(files)
    }

    func testAuthTranscripts() throws {
        let files = try TranscriptRunner.allFiles().filter { $0.lastPathComponent.hasPrefix("auth-") }
        XCTAssertGreaterThanOrEqual(files.count, 10, "auth transcripts are missing")
        try run(files)
    }

    /// Each transcript has its own issuer, directory and agent, so six run at once: most of a
    /// transcript's time is spent waiting (an issuer's latency, timeouts), not computing. Measured on
    /// two cores with every transcript on the binary, the auth transcripts took 14.8 s with four lanes
    /// and 10.7 s with six, eight or twelve; in-process on the virtual clock they take about 3 s, the
    /// floor being auth-refresh-timing's injected issuer latency. On threads of their own
    /// (`concurrently`): `concurrentPerform` would run only one per CPU.
    /// `TRANSCRIPTS=auth-accounts,auth-sign swift test --filter TranscriptTests` runs only those.
    private func run(_ all: [URL]) throws {
        let only = ProcessInfo.processInfo.environment["TRANSCRIPTS"].map { Set($0.split(separator: ",").map(String.init)) }
        let files = try longestFirst(all.filter { only?.contains($0.deletingPathExtension().lastPathComponent) ?? true })
        let schema = try SchemaValidator.load()
        let inProcess = try files.map(Self.playsInProcess)
        // The agent in this process reads its environment as the binary does; the binary's is
        // cleared of SSH_CONNECTION (see `AgentProcess`), so that it behaves as on a desktop.
        if inProcess.contains(true) { unsetenv("SSH_CONNECTION") }
        let failures = Locked([String]())
        let next = Locked(0)
        _ = try concurrently(max(1, min(6, files.count)), timeout: 600) { _ in
            while true {
                let i = next.withLock { n -> Int in defer { n += 1 }; return n }
                guard i < files.count else { return }
                do {
                    var runner = TranscriptRunner()
                    runner.schema = schema
                    runner.inProcess = inProcess[i]
                    try runner.run(files[i])
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        for failure in failures.current { XCTFail(failure) }
    }

    /// The transcripts that wait longest in real time — `!sleep`, and an issuer's injected latency
    /// (counted once) — start first, so that none of them starts last and keeps the others' lanes waiting.
    private func longestFirst(_ files: [URL]) throws -> [URL] {
        let sleeps = try files.map { url in
            try Transcript(text: String(contentsOf: url, encoding: .utf8), file: url.lastPathComponent).steps.reduce(0.0) {
                switch $1.step {
                case .sleep(let seconds): $0 + seconds
                case .issuer("latency", let milliseconds): $0 + Double(milliseconds) / 1000
                default: $0
                }
            }
        }
        return files.indices.sorted { (sleeps[$0], $1) > (sleeps[$1], $0) }.map { files[$0] }
    }
}
