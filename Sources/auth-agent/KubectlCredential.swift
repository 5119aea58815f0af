import AuthCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON
import JSONRPC
import Logging

/// `auth-agent kubectl-credential PROVIDER`: a kubectl exec credential plugin. kubectl runs it
/// for every command (and again after a 401), so a fresh token comes straight from the store.
enum KubectlCredential {
    static let apiVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    /// What `KUBERNETES_EXEC_INFO` asks: the ExecCredential apiVersion, and whether the plugin may
    /// talk to the user. Without it (run by hand) v1 and, if stdin is a terminal, interactive.
    struct ExecInfo: Equatable {
        var apiVersion: String
        var interactive: Bool
        /// The cluster's API server (`spec.cluster.server`), sent when the kubeconfig's exec
        /// section sets `provideClusterInfo: true`; nil otherwise.
        var server: String? = nil
    }

    static func execInfo(_ text: String?, stdinIsTerminal: Bool) throws(ToolFailure) -> ExecInfo {
        guard let text, !text.isEmpty else { return ExecInfo(apiVersion: apiVersions[0], interactive: stdinIsTerminal) }
        let info: JSONValue
        do { info = try JSONParser.parse(text) } catch { throw ToolFailure(.usage, "KUBERNETES_EXEC_INFO is not JSON: \(error)") }
        guard let version = info["apiVersion"]?.stringValue, apiVersions.contains(version) else {
            throw ToolFailure(.usage, "KUBERNETES_EXEC_INFO asks for apiVersion \(info["apiVersion"]?.stringValue ?? "(none)"); supported: \(apiVersions.joined(separator: ", "))")
        }
        return ExecInfo(apiVersion: version, interactive: info["spec"]?["interactive"] == true,
                        server: info["spec"]?["cluster"]?["server"]?.stringValue)
    }

    /// The ExecCredential kubectl reads; it caches the token until `expirationTimestamp`.
    static func execCredential(apiVersion: String, token: String, expiresAt: String?) -> String {
        var status: JSONObject = ["token": .string(token)]
        if let expiresAt { status["expirationTimestamp"] = .string(expiresAt) }
        return JSONSerializer.string(["apiVersion": .string(apiVersion), "kind": "ExecCredential", "status": .object(status)]) + "\n"
    }

    /// The token for the cluster kubectl names: what `sign` gives for its server (the shape its
    /// origin is configured with; refused when the provider does not cover it, so a kubeconfig
    /// pointing at another cluster never receives it), or the provider's own without cluster info.
    /// A DPoP provider's token is refused by the core (`token {bearer}`): kubectl sends no proof.
    /// An interactive kubectl gets a login at its terminal when nobody is logged in.
    static func run(_ provider: String, account: String?, shape: TokenShape?, link: AgentLink) throws(ToolFailure) -> String {
        let info = try execInfo(ProcessEnvironment.current()["KUBERNETES_EXEC_INFO"], stdinIsTerminal: isatty(0) == 1)
        func credential() throws(ToolFailure) -> String {
            let bearer = TokenMethod.Params(provider: provider, account: account, shape: shape, bearer: true)
            guard let server = info.server else {
                let token = try link.call(TokenMethod.self, bearer)
                return execCredential(apiVersion: info.apiVersion, token: token.accessToken, expiresAt: token.expiresAt.map(RFC3339.format))
            }
            let notCovered = ToolFailure(.failed, "originNotAllowed: \(provider) does not cover the cluster \(server); "
                + "add its origin (https, or http on loopback) to the provider's origins to send it the token")
            let signed: SignMethod.Result
            do {
                signed = try link.call(SignMethod.self, .init(url: server, provider: provider, account: account, shape: shape))
            } catch where error.authCode == .originNotAllowed {
                throw notCovered
            }
            guard signed.authorization != nil else { throw notCovered }
            guard let token = signed.bearerToken else {
                _ = try link.call(TokenMethod.self, bearer)
                throw ToolFailure(.failed, "\(provider) signed the cluster's requests with something other than a bearer token")
            }
            return execCredential(apiVersion: info.apiVersion, token: token, expiresAt: signed.expiresAt.map(RFC3339.format))
        }
        do {
            return try credential()
        } catch where error.needsLogin {
            guard info.interactive else { throw ToolFailure(.failed, "\(error.message) run: auth-agent login \(provider)") }
        }
        // One interactive login per provider (the core's): a parallel kubectl whose login came
        // first is waited for, and its session answers this one instead of a second prompt.
        Logger.stderrSink(try TerminalLogin.login(provider, .init(), link: link))
        return try credential()
    }
}
