#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// OAuth 2.0 Device Authorization Grant (RFC 8628): the user approves on
/// another device while `login` waits. The requesting host is sent a
/// `loginPrompt` with the user code and where to enter it.
struct DeviceCodeProvider: OAuthLoginProvider {
    static let descriptor = FlowDescriptor(
        keys: FlowDescriptor.oauthKeys + ["deviceAuthorizationEndpoint", "openBrowser"], required: ["clientId"],
        discoverable: ["deviceAuthorizationEndpoint"], fields: [], sharesAccounts: true, waitsForThePerson: true, canRefresh: FlowDescriptor.hasRefreshToken,
        makeProvider: { DeviceCodeProvider(config: $0.config, oauth: $0.oauth, clock: $0.clock, revokeTimeout: $0.revokeTimeout, browser: $0.browser) })

    let config: ProviderConfig
    let oauth: OAuthClient
    let clock: Clock
    let revokeTimeout: Double
    let browser: BrowserLauncher

    func login(_ credentials: Credentials?, context: LoginContext) async throws(AuthError) -> Session {
        guard let endpoint = try await oauth.endpoints().deviceAuthorization else {
            throw unavailable("no device authorization endpoint is configured or discovered")
        }
        let authorization: JSONObject
        switch await deviceAuthorization(endpoint) {
        case .success(let object): authorization = object
        case .failure(let error): throw error
        }
        guard let deviceCode = authorization["device_code"]?.stringValue,
              let userCode = authorization["user_code"]?.stringValue,
              let verificationURI = (authorization["verification_uri"] ?? authorization["verification_url"])?.stringValue
        else { throw unavailable("the device authorization response lacks device_code, user_code or verification_uri") }
        let lifetime = authorization["expires_in"]?.intValue.map { max(1, min($0, 3600)) } ?? 600
        var interval = authorization["interval"]?.intValue.map { max(1, min($0, 60)) } ?? 5
        let deadline = clock.deadline(after: TimeInterval(lifetime))

        // Both come from the server: neither is shown or opened unless a browser may open it.
        let verification = try BrowserURL.checked(verificationURI, what: "verification URI", provider: config)
        let complete = try authorization["verification_uri_complete"]?.stringValue.map { (text) throws(AuthError) in
            try BrowserURL.checked(text, what: "verification URI", provider: config)
        }
        var open: (@Sendable () -> Void)?
        if context.openBrowser ?? config.openBrowser {
            let (browser, page) = (self.browser, complete ?? verification)
            open = { browser.open(page) }
        }
        context.present(.deviceCode(userCode: userCode, verificationURI: verification.text, verificationURIComplete: complete?.text,
                                    expiresAt: deadline.date), LoginTarget(config), open: open)

        var failures = 0
        while true {
            do {
                try await clock.sleep(for: Double(interval))
            } catch {
                throw AuthError.loginCancelled(config)
            }
            if clock.remaining(until: deadline) <= 0 { throw AuthError.loginTimedOut(config, .deviceApproval) }
            let result = await oauth.grant([("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode)])
            switch result {
            case .rejected("authorization_pending", _):
                continue
            case .rejected("slow_down", _):
                interval += 5  // RFC 8628 §3.5: for this and every later poll
            case .rejected("access_denied", let description):
                throw AuthError.loginDenied(config, .denied(description.map { ServerRefusal(error: "access_denied", description: $0) }))
            case .rejected("expired_token", _):
                throw AuthError.loginTimedOut(config, .deviceApproval)
            case .transient:
                // Keep polling through short outages, backing off, until the code expires.
                failures += 1
                interval = min(interval * 2, 60)
                if failures > 8 { throw unavailable("the token endpoint keeps failing") }
            case .success, .rejected, .malformed:
                let token = try result.loginTokens(config) { AuthError.loginDenied(config, .deviceLoginRefused($0)) }
                return await oauth.finish(token, fallbackUser: [:])
            }
        }
    }

    private func deviceAuthorization(_ endpoint: String) async -> Result<JSONObject, AuthError> {
        let response: HTTPResponse
        do {
            response = try await oauth.postForm(endpoint, oauth.scopePairs())
        } catch {
            switch error { case .transient(let why): return .failure(unavailable(why)) }
        }
        guard let document = try? JSONParser.parse(response.body), case .object(let object) = document else {
            return .failure(unavailable("the device authorization endpoint answered HTTP \(response.status)"))
        }
        if (400..<500).contains(response.status) {
            let refusal = ServerRefusal(error: object["error"]?.stringValue ?? "HTTP \(response.status)",
                                        description: object["error_description"]?.stringValue)
            if oauth.automaticResource != nil, oauth.dropsResource(refusal.error, refusal.description) { return await deviceAuthorization(endpoint) }
            return .failure(AuthError.loginDenied(config, .deviceLoginNotStarted(refusal)))
        }
        guard response.status == 200 else { return .failure(unavailable("the device authorization endpoint answered HTTP \(response.status)")) }
        return .success(object)
    }

    private func unavailable(_ why: String) -> AuthError { AuthError.unavailable(config, why) }

}
