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

/// `auth-agent kubectl-credential PROVIDER`: a kubectl exec credential plugin. kubectl runs it
/// for every command (and again after a 401), so a fresh token comes straight from the store.
enum KubectlCredential {
    static let apiVersions = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"]

    /// What `KUBERNETES_EXEC_INFO` asks: the ExecCredential apiVersion, and whether the plugin may
    /// talk to the user. Without it (run by hand) v1 and, if stdin is a terminal, interactive.
    struct ExecInfo: Equatable {
        var apiVersion: String
        var interactive: Bool
    }

    static func execInfo(_ text: String?, stdinIsTerminal: Bool) throws(ToolFailure) -> ExecInfo {
        guard let text, !text.isEmpty else { return ExecInfo(apiVersion: apiVersions[0], interactive: stdinIsTerminal) }
        let info: JSONValue
        do { info = try JSONParser.parse(text) } catch { throw ToolFailure(.usage, "KUBERNETES_EXEC_INFO is not JSON: \(error)") }
        guard let version = info["apiVersion"]?.stringValue, apiVersions.contains(version) else {
            throw ToolFailure(.usage, "KUBERNETES_EXEC_INFO asks for apiVersion \(info["apiVersion"]?.stringValue ?? "(none)"); supported: \(apiVersions.joined(separator: ", "))")
        }
        return ExecInfo(apiVersion: version, interactive: info["spec"]?["interactive"] == true)
    }

    /// The ExecCredential kubectl reads; it caches the token until `expirationTimestamp`.
    static func execCredential(apiVersion: String, token: String, expiresAt: String?) -> String {
        var status: JSONObject = ["token": .string(token)]
        if let expiresAt { status["expirationTimestamp"] = .string(expiresAt) }
        return JSONSerializer.string(["apiVersion": .string(apiVersion), "kind": "ExecCredential", "status": .object(status)]) + "\n"
    }

    static func run(_ provider: String, session: ToolSession, command: ToolCommand) throws(ToolFailure) -> String {
        let info = try execInfo(ProcessEnvironment.current()["KUBERNETES_EXEC_INFO"], stdinIsTerminal: isatty(0) == 1)
        do {
            let token = try session.token(provider)
            return execCredential(apiVersion: info.apiVersion, token: token.token, expiresAt: token.expiresAt)
        } catch where error.needsLogin {
            guard info.interactive else {
                throw ToolFailure(.failed, "\(error.message) run: auth-agent login \(provider)")
            }
        }
        // One interactive login per provider: a parallel kubectl that got here first holds the lock,
        // and when it lets go, its session is read from the store instead of prompting again.
        let lock = try TerminalLogin.loginLock(session, provider: provider)
        defer { lock?.unlock() }
        let fresh = try ToolSession.open(command)
        do {
            let token = try fresh.token(provider)
            return execCredential(apiVersion: info.apiVersion, token: token.token, expiresAt: token.expiresAt)
        } catch where error.needsLogin {}
        let result = try TerminalLogin.run(fresh, provider: provider, options: .init(), locked: true)
        Logger.stderrSink(TerminalLogin.loggedIn(result, session: fresh))
        let token = try fresh.token(provider)
        return execCredential(apiVersion: info.apiVersion, token: token.token, expiresAt: token.expiresAt)
    }
}
