#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// A URL the agent shows in a `loginPrompt` and may hand to a browser opener:
/// https, or plain http to loopback (a local issuer), without a user name or
/// password. Login URLs partly come from servers (a device login's
/// `verification_uri`), and an opener does whatever the text says — `file:`
/// opens a local file, `javascript:` runs script, a leading `-` is read as an
/// option — so anything else is refused before it is shown or opened.
struct BrowserURL: Sendable, Equatable {
    let text: String

    init?(_ text: String) {
        guard Self.problem(text) == nil else { return nil }
        self.text = text
    }

    /// Why `text` may not be opened, or `nil` when it may.
    static func problem(_ text: String) -> String? {
        // URLAuthority accepts only http(s)://host…, with no whitespace or control
        // characters, so an accepted URL can never start with "-".
        guard let parts = URLAuthority(text) else { return "it is not an https URL" }
        if parts.hasUserinfo { return "it contains a user name or password" }
        guard Origin(scheme: parts.scheme, host: parts.host, port: parts.port).isSecureForBearer else {
            return "it uses plain http to another machine"
        }
        return nil
    }

    /// The URL, or `loginDenied` naming what it was (`what`) and why it is refused.
    static func checked(_ text: String, what: String, provider: ProviderConfig) throws(AuthError) -> BrowserURL {
        guard let url = BrowserURL(text) else {
            throw AuthError(.loginDenied, "The \(provider.displayName) login was refused: the \(what) cannot be opened safely (\(problem(text) ?? "")).",
                            provider: provider.id)
        }
        return url
    }
}

/// Opens a URL in the user's browser (`xdg-open`, or `open` on macOS), only
/// when a login asks for it. The child gets /dev/null for stdin, stdout and
/// stderr: the agent's stdout is the protocol channel and must stay clean.
///
/// The URL is passed as the only argument, without `--`: `xdg-open` refuses
/// `--` ("unexpected option") and macOS `open` does not document it.
/// `BrowserURL` is what makes this safe: it always starts with `http`, so an
/// opener never reads it as an option.
public struct BrowserLauncher: Sendable {
    public init() {}

    var command: String = {
        #if os(macOS)
        return "open"
        #else
        return "xdg-open"
        #endif
    }()

    /// Opens `text` if it passes `BrowserURL`'s check (the command line's `Press Enter to open
    /// the browser`, for a URL it got in a prompt); anything else is ignored.
    public func open(checked text: String) {
        if let url = BrowserURL(text) { open(url) }
    }

    func open(_ url: BrowserURL) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(command), strdup(url.text), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, command, &actions, nil, argv, environ) == 0 else { return }
        // Reap it so no zombie is left behind; the agent never waits on the browser.
        let child = pid
        DispatchQueue.global().async {
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
        }
    }
}
