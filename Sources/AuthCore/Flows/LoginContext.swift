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
    /// Shows the person what to do, and for what (`LoginTarget`): the protocol sends it as
    /// `loginPrompt` to the host that asked; the command line and the MCP bridge print it.
    public var prompt: @Sendable (LoginPrompt, LoginTarget) -> Void
    /// A browser login's other way in, given before its prompt: the redirect URL pasted back
    /// (the terminal reads it; the protocol's `completeLogin` hands it over).
    public var acceptPaste: @Sendable (RedirectPaste) -> Void
    /// Told when the login waits for another one of the same provider (`AuthService.oneLogin`),
    /// so the person at a terminal knows why nothing is asked yet.
    public var waiting: @Sendable (String) -> Void
    /// Asks the person for the fields of a flow that needs them (a username and password, a
    /// token: `LoginField`s), when the login brought none: the terminal can; nil where nobody
    /// can be asked. Asked under the provider's one-login lock, so parallel helpers wait for the
    /// first one's answer instead of each asking (`AuthService.oneLogin`).
    public var askFields: (@Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials)?
    /// A host that presents logins itself (it said `capabilities.presentLogin`): given the prompt
    /// and the agent's own way of presenting it — `prompt` and the browser opened by the opener
    /// rules — it calls that fallback when the host cannot (no answer in time, an error). Nil:
    /// the agent presents every login itself.
    public var hostPresents: (@Sendable (LoginPrompt, LoginTarget, _ fallback: @escaping @Sendable () -> Void) -> Void)?
    /// Whether a derived flow's login (`tokenExchange`, `idJag`) may log its subject in first: yes for a login
    /// someone asked for; no for the token a request obtains on its own, which nobody is there to log in for.
    public var logsInSubject = true

    public init(openBrowser: Bool? = nil, prompt: @escaping @Sendable (LoginPrompt, LoginTarget) -> Void = { _, _ in },
                acceptPaste: @escaping @Sendable (RedirectPaste) -> Void = { _ in }, waiting: @escaping @Sendable (String) -> Void = { _ in },
                askFields: (@Sendable (ProviderConfig, Flow) async throws(AuthError) -> Credentials)? = nil) {
        self.openBrowser = openBrowser
        self.prompt = prompt
        self.acceptPaste = acceptPaste
        self.waiting = waiting
        self.askFields = askFields
    }

    /// What a flow calls when the person must act: the host presents it if it can, else the
    /// prompt is shown and `open` (the browser, when the opener rules allow it; nil when they
    /// do not) run here. The one place a flow's prompt and its browser meet.
    public func present(_ prompt: LoginPrompt, _ target: LoginTarget, open: (@Sendable () -> Void)?) {
        let show = self.prompt
        let ourselves: @Sendable () -> Void = {
            show(prompt, target)
            open?()
        }
        if let hostPresents { hostPresents(prompt, target, ourselves) } else { ourselves() }
    }
}

/// What an interactive login asks the person to do, and until when.
public enum LoginPrompt: Sendable, Equatable {
    /// RFC 8628: enter `userCode` at `verificationURI` (or open `verificationURIComplete`).
    case deviceCode(userCode: String, verificationURI: String, verificationURIComplete: String?, expiresAt: Date)
    /// Open `url` in a browser and sign in there.
    case browser(url: String, expiresAt: Date)
}

/// What a login prompt is for, as every presenter names it: the provider, and for an API the
/// agent learned, its resource and the authorization server where the person signs in. Made
/// from the provider's configuration by the flow that prompts, so no door composes it itself.
public struct LoginTarget: Sendable, Equatable {
    public let provider: String
    public let displayName: String
    /// For a learned API: the resource and its authorization server.
    public let resource: String?
    public let authorizationServer: String?

    public init(_ config: ProviderConfig) {
        self.init(provider: config.id, displayName: config.displayName, resource: config.learned?.resource, authorizationServer: config.learned?.issuer)
    }

    /// What a `loginPrompt` from an agent said it is for (the command line through a socket agent).
    public init(provider: String, displayName: String, resource: String?, authorizationServer: String?) {
        self.provider = provider
        self.displayName = displayName
        self.resource = resource
        self.authorizationServer = authorizationServer
    }

    /// How a person is told what they log in to.
    public var name: String {
        guard let resource else { return displayName }
        return resource + (authorizationServer.map { " (signing in at \($0))" } ?? "")
    }
}
