import Foundation

/// A golden transcript: what a host sends (`-->`), what the agent must answer
/// (`<--`, or `<~~` for a group matched in any order), and directives (`!…`).
/// The format is documented in Tests/Transcripts/README.md.
struct Transcript {
    enum Step {
        case send(String)
        case sendLarge(Int)
        case expect(String)
        case expectAnyOrder([String])
        case close
        case exit(Int32)
        case stderrContains(String)
        case sleep(Double)
        /// Moves the clock that the in-process agent and its dev issuer share (fractions allowed).
        case advance(Double)
        case signal(Int32)
        /// Drives the dev issuer: `lifetime N`, `fail N`, `drop N`, `latency MS`, `revoke-all`, `reset`,
        /// `slow-down N`, `device-interval N`, `expire-devices`, `require-nonce`, `dpop-nonce`, `dpop-rotate-nonce`,
        /// `dpop-bearer N`, `dpop-refuse N`, a `DiscoveryFault` name (`wrong-resource`, …) and `discovery-faults-off`.
        case issuer(String, Int)
        /// `!issuer-client-metadata NAME`: the issuer serves a client metadata document at `${ISSUER}/clients/NAME`.
        case issuerClientMetadata(String)
        /// `!issuer auto-approve USER` (a username) or `!issuer auto-approve-off` (nil).
        case issuerAutoApprove(String?)
        /// Approves (for `user`) or denies (`user` nil) the device login whose user code was captured as `capture`.
        case device(capture: String, approveAs: String?)
        /// A browser GET of the URL captured as `capture`, following redirects.
        case browser(capture: String)
        /// The body of the last `!browser` page contains this text.
        case browserSays(String)
        /// Opens the captured authorization URL and denies the request on the issuer's form.
        case browserDeny(capture: String)
        /// The browser stops before the agent's loopback callback; the URL it would open is captured (pasted back).
        case browserRedirect(capture: String, into: String)
        /// `!issuer-answer ENDPOINT STATUS BODY`: the next request counted as ENDPOINT gets exactly that answer.
        case issuerAnswer(endpoint: String, status: Int, body: String)
        /// Asserts how many calls an issuer endpoint served.
        case issuerCount(String, Int)
        /// Ends the agent (end of input, exit 0) and starts a new one with the same arguments and store.
        case restart
    }

    struct Line {
        let number: Int
        let step: Step
    }

    var arguments: [String] = []
    var config: String?
    /// Files written (relative to the transcript's temp dir) before the agent starts.
    var files: [(path: String, content: String)] = []
    /// `!symlink PATH TARGET`: links made under `${TMP}` before the agent starts.
    var symlinks: [(path: String, target: String)] = []
    var steps: [Line] = []

    struct FormatError: Error, CustomStringConvertible {
        let description: String
    }

    init(text: String, file: String) throws {
        var group: [String] = []
        var groupLine = 0
        func flushGroup() {
            if !group.isEmpty { steps.append(Line(number: groupLine, step: .expectAnyOrder(group))) }
            group = []
        }
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let n = i + 1
            let line = String(raw)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !line.hasPrefix("<~~ ") { flushGroup() }
            if trimmed.isEmpty || trimmed.hasPrefix("//") { continue }
            if line.hasPrefix("--> ") {
                steps.append(Line(number: n, step: .send(String(line.dropFirst(4)))))
            } else if line.hasPrefix("<-- ") {
                steps.append(Line(number: n, step: .expect(String(line.dropFirst(4)))))
            } else if line.hasPrefix("<~~ ") {
                if group.isEmpty { groupLine = n }
                group.append(String(line.dropFirst(4)))
            } else if line.hasPrefix("!") {
                let parts = line.dropFirst().split(separator: " ", maxSplits: 1).map(String.init)
                let arg = parts.count > 1 ? parts[1] : ""
                switch parts[0] {
                case "args": arguments += arg.split(separator: " ").map(String.init)
                case "config": config = arg
                case "send-large":
                    guard let size = Int(arg) else { throw FormatError(description: "\(file):\(n): !send-large needs a size") }
                    steps.append(Line(number: n, step: .sendLarge(size)))
                case "close": steps.append(Line(number: n, step: .close))
                case "restart": steps.append(Line(number: n, step: .restart))
                case "file":
                    let fileParts = arg.split(separator: " ", maxSplits: 1).map(String.init)
                    guard fileParts.count == 2 else { throw FormatError(description: "\(file):\(n): !file needs a path and content") }
                    files.append((fileParts[0], fileParts[1]))
                case "symlink":
                    let linkParts = arg.split(separator: " ").map(String.init)
                    guard linkParts.count == 2 else { throw FormatError(description: "\(file):\(n): !symlink needs a path and a target") }
                    symlinks.append((linkParts[0], linkParts[1]))
                case "exit":
                    guard let code = Int32(arg) else { throw FormatError(description: "\(file):\(n): !exit needs a code") }
                    steps.append(Line(number: n, step: .exit(code)))
                case "stderr-contains": steps.append(Line(number: n, step: .stderrContains(arg)))
                case "sleep":
                    guard let s = Double(arg) else { throw FormatError(description: "\(file):\(n): !sleep needs seconds") }
                    steps.append(Line(number: n, step: .sleep(s)))
                case "advance":
                    guard let s = Double(arg), s >= 0 else { throw FormatError(description: "\(file):\(n): !advance needs seconds") }
                    steps.append(Line(number: n, step: .advance(s)))
                case "signal":
                    let sig: Int32 = arg == "TERM" ? SIGTERM : arg == "INT" ? SIGINT : -1
                    guard sig > 0 else { throw FormatError(description: "\(file):\(n): !signal takes TERM or INT") }
                    steps.append(Line(number: n, step: .signal(sig)))
                case "issuer" where arg.hasPrefix("auto-approve"):
                    let words = arg.split(separator: " ").map(String.init)
                    switch (words.first, words.count) {
                    case ("auto-approve", 2): steps.append(Line(number: n, step: .issuerAutoApprove(words[1])))
                    case ("auto-approve-off", 1): steps.append(Line(number: n, step: .issuerAutoApprove(nil)))
                    default: throw FormatError(description: "\(file):\(n): use !issuer auto-approve USER or !issuer auto-approve-off")
                    }
                case "device":
                    let words = arg.split(separator: " ").map(String.init)
                    let usage = FormatError(description: "\(file):\(n): use !device approve <$name> USER or !device deny <$name>")
                    guard words.count >= 2, let capture = Self.captureName(words[1]) else { throw usage }
                    switch (words[0], words.count) {
                    case ("approve", 3): steps.append(Line(number: n, step: .device(capture: capture, approveAs: words[2])))
                    case ("deny", 2): steps.append(Line(number: n, step: .device(capture: capture, approveAs: nil)))
                    default: throw usage
                    }
                case "browser":
                    guard let capture = Self.captureName(arg) else { throw FormatError(description: "\(file):\(n): use !browser <$name>") }
                    steps.append(Line(number: n, step: .browser(capture: capture)))
                case "browser-redirect":
                    let words = arg.split(separator: " ").map(String.init)
                    guard words.count == 2, let capture = Self.captureName(words[0]), let into = Self.captureName(words[1]) else {
                        throw FormatError(description: "\(file):\(n): use !browser-redirect <$url> <$redirect>")
                    }
                    steps.append(Line(number: n, step: .browserRedirect(capture: capture, into: into)))
                case "browser-deny":
                    guard let capture = Self.captureName(arg) else { throw FormatError(description: "\(file):\(n): use !browser-deny <$name>") }
                    steps.append(Line(number: n, step: .browserDeny(capture: capture)))
                case "browser-says":
                    guard !arg.isEmpty else { throw FormatError(description: "\(file):\(n): !browser-says needs text") }
                    steps.append(Line(number: n, step: .browserSays(arg)))
                case "issuer-client-metadata":
                    guard !arg.isEmpty, !arg.contains(" "), !arg.contains("/") else {
                        throw FormatError(description: "\(file):\(n): use !issuer-client-metadata NAME")
                    }
                    steps.append(Line(number: n, step: .issuerClientMetadata(arg)))
                case "issuer-answer":
                    let words = arg.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
                    guard words.count >= 2, !words[0].isEmpty, let status = Int(words[1]) else {
                        throw FormatError(description: "\(file):\(n): use !issuer-answer ENDPOINT STATUS [BODY]")
                    }
                    steps.append(Line(number: n, step: .issuerAnswer(endpoint: words[0], status: status, body: words.count > 2 ? words[2] : "")))
                case "issuer", "issuer-count":
                    let words = arg.split(separator: " ").map(String.init)
                    guard let name = words.first else { throw FormatError(description: "\(file):\(n): !\(parts[0]) needs arguments") }
                    let number = words.count > 1 ? Int(words[1]) : 0
                    guard let number else { throw FormatError(description: "\(file):\(n): !\(parts[0]) needs a number") }
                    steps.append(Line(number: n, step: parts[0] == "issuer" ? .issuer(name, number) : .issuerCount(name, number)))
                default:
                    throw FormatError(description: "\(file):\(n): unknown directive !\(parts[0])")
                }
            } else {
                throw FormatError(description: "\(file):\(n): a line must start with -->, <--, <~~, ! or //")
            }
        }
        flushGroup()
    }

    /// Why this transcript must play against the built binary — the first step (or setup) that
    /// is about the process: its arguments, its stdin's end and exit code, signals, the stdio
    /// framer's limit — or nil when the agent in this process can play it.
    var processDirective: String? {
        if !arguments.isEmpty { return "!args" }
        for line in steps {
            switch line.step {
            case .sendLarge: return "!send-large (line \(line.number))"
            case .close: return "!close (line \(line.number))"
            case .exit: return "!exit (line \(line.number))"
            case .signal: return "!signal (line \(line.number))"
            default: continue
            }
        }
        return nil
    }

    /// Whether the transcript moves the shared clock, and so needs the in-process agent.
    var advancesTheClock: Bool {
        steps.contains { if case .advance = $0.step { true } else { false } }
    }

    /// `name` from a `<$name>` reference to a capture, or nil when `word` is not one.
    static func captureName(_ word: String) -> String? {
        guard word.hasPrefix("<$"), word.hasSuffix(">"), word.count > 3 else { return nil }
        return String(word.dropFirst(2).dropLast())
    }

    /// `\xHH` in a sent line stands for one raw byte, so invalid UTF-8 and NUL can be written down.
    static func bytes(ofSent text: String) -> Data {
        var out = Data()
        let utf8 = Array(text.utf8)
        var i = 0
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "\\"), i + 3 < utf8.count, utf8[i + 1] == UInt8(ascii: "x"),
               let v = UInt8(String(decoding: utf8[(i + 2)...(i + 3)], as: UTF8.self), radix: 16)
            {
                out.append(v)
                i += 4
            } else {
                out.append(utf8[i])
                i += 1
            }
        }
        return out
    }
}
