import AuthCore
import DevIssuer
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

/// `auth-agent demo`: the agent against a built-in dev issuer on a free
/// loopback port, with a memory store, so anyone can try the protocol with
/// nothing configured — and a second one, an MCP server's authorization server that
/// trusts the first's ID-JAGs, so one enterprise login opens it (`learn.enterpriseIdP`).
enum Demo {
    /// The configuration, and the issuers it points at (which must outlive the agent's serving).
    static func start(logger: Logger) -> (AgentConfig, [DevIssuer]) {
        let issuer = DevIssuer(options: DevIssuerOptions(deviceInterval: 2))
        let enterprise: DevIssuer
        do {
            _ = try issuer.start(port: 0)
            var trusting = DevIssuerOptions()
            trusting.trustedIssuers = [issuer.baseURL]
            enterprise = DevIssuer(options: trusting)
            _ = try enterprise.start(port: 0)
        } catch {
            Logger.stderrSink("auth-agent: demo cannot start its dev issuer: \(error)")
            exit(1)
        }
        let base = issuer.baseURL
        let text = """
            {"refreshWindowSeconds": 60, "store": {"kind": "memory"}, "learn": {"enterpriseIdP": "demo-oauth"}, "providers": [
              {"id": "demo", "displayName": "Demo API", "flow": "session", "origins": ["https://api.demo.test", "\(base)"],
               "loginEndpoint": "\(base)/sessions",
               "loginBody": {"session": {"username": "{{username}}", "password": "{{password}}"}},
               "tokenPointer": "/jwt", "userPointer": "/user",
               "refreshEndpoint": "\(base)/sessions/refresh", "logoutEndpoint": "\(base)/sessions/logout"},
              {"id": "demo-oauth", "displayName": "Demo OAuth", "flow": "password", "origins": ["https://oauth.demo.test", "http://localhost:\(issuer.port)"],
               "tokenEndpoint": "\(base)/token", "revocationEndpoint": "\(base)/revoke", "userinfoEndpoint": "\(base)/userinfo",
               "clientId": "cli", "scopes": ["openid", "profile"]},
              {"id": "demo-device", "displayName": "Demo device login", "flow": "deviceCode", "origins": ["https://device.demo.test"],
               "issuer": "\(base)", "clientId": "cli", "scopes": ["openid", "profile"]}
            ]}
            """
        let config: AgentConfig
        do {
            config = try AgentConfig.parse(Array(text.utf8), file: "(demo)")
        } catch {
            fatalError("the embedded demo configuration is invalid: \(error)")
        }
        Logger.stderrSink("""
            auth-agent demo: dev issuer on \(base) (users alice/wonderland, bob/builder), its protected API
            at \(base)/api/me (signed with the demo provider's token), and \(base)/mcp, an API that describes
            itself (RFC 9728) for the agent to learn with no configuration; \(base)/git/demo.git is a git repository
            for git-credential (its token as the password). Try:
              {"jsonrpc":"2.0","id":1,"method":"login","params":{"provider":"demo","credentials":{"username":"alice","password":"wonderland"}}}
              {"jsonrpc":"2.0","id":2,"method":"sign","params":{"request":{"method":"GET","url":"https://api.demo.test/items"}}}
              {"jsonrpc":"2.0","id":3,"method":"fetch","params":{"request":{"method":"GET","url":"\(base)/api/me"}}}
              {"jsonrpc":"2.0","id":4,"method":"status"}
              {"jsonrpc":"2.0","id":5,"method":"login","params":{"provider":"demo-device"}}   (then approve at the URL it prompts)
              {"jsonrpc":"2.0","id":6,"method":"login","params":{"resource":"\(issuer.learnableResource)"}}   (discovers, registers, then sign in at the URL it prompts)
            Enterprise-Managed Authorization: \(enterprise.learnableResource) is an MCP server whose authorization server
            trusts the first issuer's ID-JAGs; logged in to demo-oauth (the enterprise IdP), it opens with no browser:
              {"jsonrpc":"2.0","id":7,"method":"login","params":{"provider":"demo-oauth","credentials":{"username":"alice","password":"wonderland"}}}
              {"jsonrpc":"2.0","id":8,"method":"login","params":{"resource":"\(enterprise.learnableResource)"}}
            """)
        return (config, [issuer, enterprise])
    }
}
