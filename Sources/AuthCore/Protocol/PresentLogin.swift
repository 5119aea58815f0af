#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking
import Wire

/// `presentLogin`: the agent→host request that lets a host present a login itself — an editor
/// opening the URL on the person's side of a remote session (VS Code's `env.openExternal`),
/// showing the code in its own window, taking the redirect it captured or the person pasted.
/// Sent to a host that said `capabilities: {presentLogin: {openUrl, showCode, askRedirect}}` in
/// `initialize`, for a login its own request started; the agent stays the one place that decides
/// (the redirect is checked as a pasted one is, the login still ends by its own deadline).
/// A host that cannot — no capability for this kind of prompt, an error, no answer within
/// `fallbackAfter` seconds — gets today's `loginPrompt` and the agent's own opener rules.
enum PresentLogin {
    static let method = "presentLogin"
    /// How long the agent waits for a first answer before it presents the login itself.
    static let fallbackAfter = 10.0

    /// What the host said it presents. `presentLogin: true` is all of it.
    struct Capability: Sendable, Equatable {
        var openUrl = false
        var showCode = false
        var askRedirect = false

        init?(_ value: JSONValue?) {
            switch value {
            case .bool(true)?: (openUrl, showCode, askRedirect) = (true, true, true)
            case .object(let o)?:
                (openUrl, showCode, askRedirect) = (o["openUrl"] == true, o["showCode"] == true, o["askRedirect"] == true)
                if !openUrl && !showCode && !askRedirect { return nil }
            default: return nil
            }
        }

        /// Whether the host can present this prompt: a browser's URL opened or its redirect
        /// asked for; a device code shown (or its page opened).
        func presents(_ prompt: LoginPrompt) -> Bool {
            switch prompt {
            case .browser: return openUrl || askRedirect
            case .deviceCode: return showCode || openUrl
            }
        }
    }

    /// What the host answered.
    enum Answer: Equatable {
        /// It showed or opened it: the agent opens nothing itself.
        case opened
        /// The final redirect it captured or the person pasted: checked as a pasted one.
        case redirect(String)
        /// The person declined: the login ends.
        case cancelled

        init?(_ result: JSONValue) {
            if let url = result["redirectUrl"]?.stringValue {
                self = .redirect(url)
            } else if result["cancelled"] == true {
                self = .cancelled
            } else if result["opened"] == true {
                self = .opened
            } else {
                return nil
            }
        }
    }

    /// The request's params: `loginPrompt`'s, with the kind, the name to show and, for a
    /// browser login, the loopback redirect URI the host may have to forward or watch for.
    static func params(_ prompt: LoginPrompt, target: LoginTarget, requestId: JSONValue) -> JSONValue {
        guard case .object(var o) = LoginMethod.prompt(prompt, target: target, requestId: requestId) else { return .null }
        o["displayName"] = .string(target.displayName)
        switch prompt {
        case .browser(let url, _):
            o["kind"] = "browser"
            if let redirect = Self.redirectURI(in: url) { o["redirectUri"] = .string(redirect) }
        case .deviceCode:
            o["kind"] = "deviceCode"
        }
        return .object(o)
    }

    /// The authorization URL's `redirect_uri`.
    static func redirectURI(in url: String) -> String? {
        guard let query = url.split(separator: "?", maxSplits: 1).dropFirst().first else { return nil }
        return FormEncoding.decode(query.utf8)?.first { $0.name == "redirect_uri" }?.value
    }

    /// The presenter for a login `call` started, when its host presents logins: the request sent
    /// on a task of its own (the flow goes on: its listener or polling starts at once), the
    /// agent's own presentation after `fallbackAfter` seconds without an answer or at an error,
    /// and an answer acted on whenever it comes before the login ends.
    static func presenter(_ call: RPCCall, _ context: AuthMethodContext) -> (@Sendable (LoginPrompt, LoginTarget, @escaping @Sendable () -> Void) -> Void)? {
        guard let capability = AuthHost.host(of: call.connection)?.presentsLogin else { return nil }
        let (connection, requestId, service) = (call.connection, call.id ?? .null, context.service)
        return { prompt, target, fallback in
            guard capability.presents(prompt) else { return fallback() }
            let once = Locked(false)
            let fallBack: @Sendable () -> Void = { if once.withLock({ done in defer { done = true }; return !done }) { fallback() } }
            let clock = service.clock
            let expiresAt: Date
            switch prompt {
            case .browser(_, let at), .deviceCode(_, _, _, let at): expiresAt = at
            }
            let timer = Task {
                try? await clock.sleep(for: fallbackAfter)
                if !Task.isCancelled { fallBack() }
            }
            Task {
                defer { timer.cancel() }
                let answer: Answer?
                do {
                    let result = try await connection.request(method, params(prompt, target: target, requestId: requestId),
                                                              timeout: max(fallbackAfter, expiresAt.timeIntervalSince(clock.now())))
                    answer = Answer(result)
                } catch {
                    answer = nil
                }
                switch answer {
                case .opened?: timer.cancel(); once.withLock { $0 = true }
                case .redirect(let url)?:
                    timer.cancel()
                    // Checked as a pasted one: the login's state, used once. A wrong one leaves the login
                    // waiting, presented by the agent, so the person can still finish it.
                    do throws(PendingLogins.Rejection) {
                        try service.pendingLogins.complete(requestId: requestId, redirectURL: url, door: service.door)
                        once.withLock { $0 = true }
                    } catch {
                        fallBack()
                    }
                case .cancelled?: connection.cancel(request: requestId)
                case nil: fallBack()
                }
            }
        }
    }
}
