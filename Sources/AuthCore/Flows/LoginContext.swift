#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an interactive login needs from whoever started it: where to show the
/// prompt, and whether to open a browser.
public struct LoginContext: Sendable {
    /// `login`'s `openBrowser` param; nil defers to the provider's configuration.
    public var openBrowser: Bool?
    /// Shows the person what to do: the protocol sends it as `loginPrompt` to the
    /// host that asked; the command line prints it.
    public var prompt: @Sendable (LoginPrompt) -> Void
    /// Told, before the prompt, which learned provider a login learned from an API is for and
    /// where the person will sign in — `loginPrompt` shows `authorizationServer` and `resource`.
    public var learning: @Sendable (LearnedLogin) -> Void = { _ in }
    /// A browser login's other way in, given before its prompt: the redirect URL pasted back
    /// (the terminal reads it; the protocol's `completeLogin` hands it over).
    public var acceptPaste: @Sendable (RedirectPaste) -> Void

    public init(openBrowser: Bool? = nil, prompt: @escaping @Sendable (LoginPrompt) -> Void = { _ in },
                acceptPaste: @escaping @Sendable (RedirectPaste) -> Void = { _ in }) {
        self.openBrowser = openBrowser
        self.prompt = prompt
        self.acceptPaste = acceptPaste
    }
}

/// What an interactive login asks the person to do, and until when.
public enum LoginPrompt: Sendable, Equatable {
    /// RFC 8628: enter `userCode` at `verificationURI` (or open `verificationURIComplete`).
    case deviceCode(userCode: String, verificationURI: String, verificationURIComplete: String?, expiresAt: Date)
    /// Open `url` in a browser and sign in there.
    case browser(url: String, expiresAt: Date)
}
