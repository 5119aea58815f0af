import DevIssuer
import Foundation
import JSON

/// Carries out the transcript steps that act outside the agent — on the dev
/// issuer (`!issuer`, `!issuer-count`, `!device`) and as the user's browser
/// (`!browser`, `!browser-says`) — so the runner stays about messages, and these
/// steps can be tested without an agent.
struct IssuerDirectives {
    let issuer: DevIssuer
    let browser: Browser
    /// The body of the page the last `!browser` ended on.
    private(set) var lastPage: String?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(issuer: DevIssuer, browserTimeout: TimeInterval = 10) {
        self.issuer = issuer
        self.browser = Browser(timeout: browserTimeout)
    }

    /// Performs `step` if it is one of these directives; `false` for any other step.
    mutating func perform(_ step: Transcript.Step, captures: inout [String: JSONValue]) throws -> Bool {
        switch step {
        case .issuer(let action, let n):
            switch action {
            case "lifetime": issuer.setAccessTokenLifetime(n)
            case "fail": issuer.failNext(n)
            case "drop": issuer.dropNext(n)
            case "reject-api": issuer.rejectAPINext(n)
            case "latency": issuer.setLatency(milliseconds: n)
            case "revoke-all": issuer.revokeAll()
            case "reset": issuer.resetCounts()
            case "slow-down": issuer.forceSlowDown(n)
            case "device-interval": issuer.setDeviceInterval(n)
            case "expire-devices": issuer.expireDeviceCodes()
            case "require-nonce": issuer.setRequireNonce(true)
            case "discovery-faults-off": issuer.clearDiscoveryFaults()
            case "dpop-nonce": issuer.setDPoPNonceRequired(true)
            case "dpop-rotate-nonce": issuer.rotateDPoPNonce()
            case "dpop-bearer": issuer.answerBearerToDPoPNext(n)
            case "dpop-refuse": issuer.refuseDPoPProofsNext(n)
            default:
                guard let fault = DiscoveryFault(rawValue: action) else { throw Failure(description: "unknown issuer action \(action)") }
                issuer.injectDiscoveryFault(fault)
            }
        case .issuerClientMetadata(let name):
            issuer.publishClientMetadataDocument(name: name)
        case .issuerAnswer(let endpoint, let status, let body):
            issuer.answerNext(endpoint, status: status, body: body)
        case .issuerCount(let endpoint, let expected):
            let actual = issuer.count(endpoint)
            if actual != expected { throw Failure(description: "the issuer served \(actual) \(endpoint) calls, expected \(expected)") }
        case .issuerAutoApprove(let user):
            issuer.setAutoApprove(username: user)
        case .device(let capture, let user):
            let userCode = try string(capture, captures)
            let decided = user.map { issuer.approveDevice(userCode: userCode, username: $0) } ?? issuer.denyDevice(userCode: userCode)
            if !decided {
                throw Failure(description: "no pending device login with user code \(userCode)" + (user.map { " (or no user \($0))" } ?? ""))
            }
        case .browser(let capture):
            let url = try string(capture, captures)
            do {
                lastPage = try browser.navigate(url).body
            } catch {
                lastPage = nil
                throw Failure(description: "browser: \(error)")
            }
        case .browserDeny(let capture):
            let url = try string(capture, captures)
            do {
                let page = try browser.navigate(url)
                guard let form = HTMLForm.first(containing: "action", in: page.body) else {
                    throw Failure(description: "the authorization page has no form")
                }
                let fields = form.filled([("username", "alice"), ("password", "wonderland"), ("action", "deny")])
                lastPage = try browser.submit(fields, to: form.target(relativeTo: page.url)).body
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(description: "browser: \(error)")
            }
        case .browserRedirect(let capture, let into):
            let url = try string(capture, captures)
            let loopback = { (next: URL) in (next.host == "127.0.0.1" || next.host == "localhost") && next.path == "/callback" }
            do {
                let last = try browser.navigate(url, stopAt: loopback)
                guard let location = last.location, let next = URL(string: location, relativeTo: last.url)?.absoluteURL, loopback(next) else {
                    throw Failure(description: "the browser did not end at a loopback redirect (\(last.url) answered \(last.status))")
                }
                captures[into] = .string(next.absoluteString)
                lastPage = nil
            } catch let failure as Failure {
                throw failure
            } catch {
                throw Failure(description: "browser: \(error)")
            }
        case .browserSays(let text):
            guard let page = lastPage else { throw Failure(description: "!browser-says needs a successful !browser before it") }
            if !page.contains(text) {
                throw Failure(description: "the browser's page does not contain \"\(text)\"; it was:\n  \(page.prefix(1000))")
            }
        default:
            return false
        }
        return true
    }

    private func string(_ capture: String, _ captures: [String: JSONValue]) throws -> String {
        guard let value = captures[capture] else { throw Failure(description: "nothing was captured as <$\(capture)> yet") }
        guard let text = value.stringValue else { throw Failure(description: "<$\(capture)> is \(value.kindName), not a string") }
        return text
    }
}
