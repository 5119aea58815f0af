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
            throw AuthError.loginDenied(provider, .unsafeURL(what: what, problem: problem(text) ?? ""))
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

    /// Over SSH (`SSH_CONNECTION`) with neither `DISPLAY` nor `WAYLAND_DISPLAY`: no browser
    /// here can be opened, and none would reach the person. The agent's own environment
    /// decides: a login forwarded from a remote host runs where the agent, and the display, are.
    public static func remoteWithoutDisplay(_ environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) -> Bool {
        func set(_ name: String) -> Bool { !(environment(name) ?? "").isEmpty }
        return set("SSH_CONNECTION") && !set("DISPLAY") && !set("WAYLAND_DISPLAY")
    }

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
        // A browser opened on the far side of an SSH session is one nobody sees (or a text one
        // that takes over the terminal): the URL is shown, and the redirect pasted back.
        guard !Self.remoteWithoutDisplay() else { return }
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

extension ProviderConfig {
    /// The flow a login naming none uses: the first listed, except that where no browser can
    /// be opened (`BrowserLauncher.remoteWithoutDisplay`) a provider offering both a device
    /// and a browser login uses the device code, which needs no pasting back — unless its
    /// server turned out not to offer one (`deviceOffered` false: no configured endpoint, none
    /// in the discovery document; nil: not known yet, the configuration is taken at its word).
    public func defaultFlow(remoteWithoutDisplay: Bool = BrowserLauncher.remoteWithoutDisplay(), deviceOffered: Bool? = nil) -> Flow {
        guard remoteWithoutDisplay, flows.contains(.authorizationCode), flows.contains(.deviceCode), deviceOffered != false else { return flow }
        return .deviceCode
    }

    /// How the default flow's interactive login reaches the person (`status`'s `interactive`):
    /// a browser opened here, a URL shown and its redirect pasted back, or a device code; nil
    /// for flows that ask no browser.
    public func interactive(remoteWithoutDisplay: Bool = BrowserLauncher.remoteWithoutDisplay(), deviceOffered: Bool? = nil) -> String? {
        switch defaultFlow(remoteWithoutDisplay: remoteWithoutDisplay, deviceOffered: deviceOffered) {
        case .deviceCode: return "device"
        case .authorizationCode: return remoteWithoutDisplay ? "paste" : "browser"
        default: return nil
        }
    }
}
