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

    /// The token shape for the cluster kubectl names: the one its server's origin is configured
    /// with, as `sign` would use. A server the provider does not cover (or not over https or
    /// loopback) gets no token: a kubeconfig pointing at another cluster must not receive it.
    /// Without cluster info there is nothing to check (nil: the provider's own token).
    static func shape(for info: ExecInfo, provider: String, session: ToolSession) throws(ToolFailure) -> TokenShape? {
        guard let server = info.server else { return nil }
        do {
            return try session.service.coverage(url: server, provider: provider)?.shape
        } catch where error.code == .originNotAllowed {
            throw ToolFailure(.failed, "originNotAllowed: \(provider) does not cover the cluster \(server); "
                + "add its origin (https, or http on loopback) to the provider's origins to send it the token")
        } catch {
            throw ToolFailure(error)
        }
    }

    /// The ExecCredential kubectl reads; it caches the token until `expirationTimestamp`.
    static func execCredential(apiVersion: String, token: String, expiresAt: String?) -> String {
        var status: JSONObject = ["token": .string(token)]
        if let expiresAt { status["expirationTimestamp"] = .string(expiresAt) }
        return JSONSerializer.string(["apiVersion": .string(apiVersion), "kind": "ExecCredential", "status": .object(status)]) + "\n"
    }

    static func run(_ provider: String, session: ToolSession, command: ToolCommand) throws(ToolFailure) -> String {
        let info = try execInfo(ProcessEnvironment.current()["KUBERNETES_EXEC_INFO"], stdinIsTerminal: isatty(0) == 1)
        let shape = try shape(for: info, provider: provider, session: session)
        do {
            let token = try session.token(provider, shape: shape)
            return execCredential(apiVersion: info.apiVersion, token: token.token, expiresAt: token.expiresAt)
        } catch where error.needsLogin {
            guard info.interactive else {
                throw ToolFailure(.failed, "\(error.message) run: auth-agent login \(provider)")
            }
        }
        // One interactive login per provider (the core's): a parallel kubectl whose login came
        // first is waited for, and its session answers this one instead of a second prompt.
        let result = try TerminalLogin.run(session, provider: provider, options: .init())
        Logger.stderrSink(TerminalLogin.loggedIn(result, session: session))
        let token = try session.token(provider, shape: shape)
        return execCredential(apiVersion: info.apiVersion, token: token.token, expiresAt: token.expiresAt)
    }
}
