import TestSupport
import XCTest
@testable import AuthCore
import JSON

final class ConfigTests: XCTestCase {
    static let example = """
    { "refreshWindowSeconds": 90,
      "store": {"kind": "file", "path": "/var/lib/agent"},
      "providers": [
        {"id": "api", "displayName": "Example API", "flow": "session",
         "origins": ["https://api.example.com"],
         "loginEndpoint": "https://api.example.com/sessions",
         "loginBody": {"session": {"username": "{{username}}", "password": "{{password}}"}},
         "tokenPointer": "/jwt", "userPointer": "/user", "refreshEndpoint": "https://api.example.com/sessions/refresh"},
        {"id": "corp", "displayName": "Corp SSO", "flow": "password",
         "origins": ["https://corp.example.com", "http://127.0.0.1:8080"],
         "tokenEndpoint": "https://sso.example.com/token", "revocationEndpoint": "https://sso.example.com/revoke",
         "userinfoEndpoint": "https://sso.example.com/userinfo",
         "clientId": "cli", "clientSecret": "TOP-SECRET", "scopes": ["openid", "profile"]}
      ] }
    """

    private func parse(_ text: String) throws(ConfigError) -> AgentConfig {
        try AgentConfig.parse(Array(text.utf8), file: "config.json")
    }

    func testValidExample() throws {
        let config = try parse(ConfigTests.example)
        XCTAssertEqual(config.refreshWindowSeconds, 90)
        XCTAssertEqual(config.store, .file(path: "/var/lib/agent"))
        XCTAssertEqual(config.providers.map(\.id), ["api", "corp"])
        let api = config.providers[0]
        XCTAssertEqual(api.flow, .session)
        XCTAssertEqual(api.displayName, "Example API")
        XCTAssertEqual(api.origins, [Origin(url: "https://api.example.com:443")!])
        XCTAssertEqual(api.loginEndpoint, "https://api.example.com/sessions")
        XCTAssertEqual(api.loginBody?["session"]?["password"], "{{password}}")
        XCTAssertEqual(api.tokenPointer, JSONPointer("/jwt"))
        XCTAssertEqual(api.userPointer, JSONPointer("/user"))
        XCTAssertEqual(api.refreshEndpoint, "https://api.example.com/sessions/refresh")
        XCTAssertNil(api.logoutEndpoint)
        XCTAssertNil(api.clientId)
        let corp = config.providers[1]
        XCTAssertEqual(corp.flow, .password)
        XCTAssertEqual(corp.origins.map(\.description), ["https://corp.example.com", "http://127.0.0.1:8080"])
        XCTAssertEqual(corp.tokenEndpoint, "https://sso.example.com/token")
        XCTAssertEqual(corp.revocationEndpoint, "https://sso.example.com/revoke")
        XCTAssertEqual(corp.userinfoEndpoint, "https://sso.example.com/userinfo")
        XCTAssertEqual(corp.clientId, "cli")
        XCTAssertEqual(corp.clientSecret, "TOP-SECRET")
        XCTAssertEqual(corp.scopes, ["openid", "profile"])
        XCTAssertFalse(corp.openBrowser, "the browser opens only when asked")
        XCTAssertNil(corp.redirectPort)
        XCTAssertEqual(config.originMatcher.provider(for: "http://127.0.0.1:8080/x"), "corp")
        XCTAssertEqual(config.originMatcher.provider(for: "https://api.example.com/x"), "api")
    }

    func testDefaultsAndOtherFlows() throws {
        let config = try parse("""
        {"providers": [
          {"id": "pat", "flow": "token", "origins": ["https://git.example.com/"]},
          {"id": "svc", "flow": "clientCredentials", "origins": ["https://svc.example.com"],
           "tokenEndpoint": "http://localhost:9000/token", "clientId": "svc"},
          {"id": "dev", "flow": "deviceCode", "origins": ["https://dev.example.com"], "clientId": "d",
           "issuer": "https://login.example.com", "openBrowser": false},
          {"id": "web.app_2-x", "flow": "authorizationCode", "origins": ["http://[::1]:7000"], "clientId": "w",
           "authorizationEndpoint": "https://login.example.com/auth", "tokenEndpoint": "https://login.example.com/token",
           "redirectPort": 53682, "scopes": ["openid", "offline_access"]}
        ]}
        """)
        XCTAssertEqual(config.refreshWindowSeconds, 60)
        XCTAssertEqual(config.store, .auto(path: nil))  // issue 11: the default became auto (was file)
        XCTAssertEqual(config.providers.map(\.flow), [.token, .clientCredentials, .deviceCode, .authorizationCode])
        XCTAssertEqual(config.providers[0].displayName, "pat")
        XCTAssertEqual(config.providers[2].openBrowser, false)
        XCTAssertEqual(config.providers[2].issuer, "https://login.example.com")
        XCTAssertEqual(config.providers[3].redirectPort, 53682)
        XCTAssertEqual(try parse(#"{"store": {"kind": "memory"}, "providers": [], "$schema": "x"}"#).store, .memory)
        XCTAssertEqual(try parse(#"{"store": {"kind": "keyring", "path": "/s"}, "providers": []}"#).store, .keyring(path: "/s"))
        XCTAssertEqual(try parse(#"{"store": {"kind": "auto"}, "providers": []}"#).store, .auto(path: nil))
        XCTAssertEqual(try parse(#"{"store": {"kind": "file"}, "providers": []}"#).store, .file(path: nil))
        XCTAssertEqual(try parse(#"{"refreshWindowSeconds": 0, "providers": []}"#).refreshWindowSeconds, 0)
    }

    private let session = #""id": "api", "flow": "session", "origins": ["https://api.example.com"], "loginEndpoint": "https://api.example.com/s", "loginBody": {}, "tokenPointer": "/jwt""#
    private let password = #""id": "corp", "flow": "password", "origins": ["https://corp.example.com"], "tokenEndpoint": "https://sso.example.com/token", "clientId": "cli""#

    /// Issue 10 item 14: `issuer` alone is enough for every OAuth flow; explicit endpoints still count.
    func testIssuerAloneServesEveryOAuthFlow() throws {
        for flow in ["password", "clientCredentials", "deviceCode", "authorizationCode"] {
            let text = #"{"providers": [{"id": "p", "flow": "\#(flow)", "origins": ["https://a.com"], "issuer": "https://id.a.com", "clientId": "x"}]}"#
            let provider = try parse(text).providers[0]
            XCTAssertEqual(provider.issuer, "https://id.a.com", flow)
            XCTAssertNil(provider.tokenEndpoint, flow)
        }
        let explicit = #"{"providers": [{"id": "p", "flow": "password", "origins": ["https://a.com"], "issuer": "https://id.a.com", "tokenEndpoint": "https://t.a.com/token", "clientId": "x"}]}"#
        XCTAssertEqual(try parse(explicit).providers[0].tokenEndpoint, "https://t.a.com/token")
        var endpoints = Endpoints(config: try parse(explicit).providers[0])
        endpoints.fill(from: ["token_endpoint": "https://id.a.com/token"])
        XCTAssertEqual(endpoints.token, "https://t.a.com/token", "explicit endpoints override discovered ones")
        XCTAssertThrowsError(try parse(#"{"providers": [{"id": "p", "flow": "password", "origins": ["https://a.com"], "clientId": "x"}]}"#)) { error in
            XCTAssertTrue("\(error)".contains(#"requires "tokenEndpoint", or "issuer" to discover it"#), "\(error)")
        }
    }

    /// Issue 20 item 3: one identity provider, several ways to log in. A list of flows is one
    /// provider (its origins claimed once); the first is the default; every flow's keys are
    /// allowed and every flow's requirements apply; a string stays valid.
    func testSeveralFlowsShareOneProvider() throws {
        let config = try parse("""
        {"providers": [
          {"id": "dot", "flow": ["authorizationCode", "deviceCode", "password"], "origins": ["https://git.example.com"],
           "issuer": "https://sso.example.com", "clientId": "cli", "redirectPort": 8765, "openBrowser": true},
          {"id": "pat", "flow": "token", "origins": ["https://pat.example.com"]}
        ]}
        """)
        let dot = config.providers[0]
        XCTAssertEqual(dot.flows, [.authorizationCode, .deviceCode, .password])
        XCTAssertEqual(dot.flow, .authorizationCode, "the first is the default")
        XCTAssertEqual(dot.redirectPort, 8765)
        XCTAssertEqual(config.providers[1].flows, [.token])
        XCTAssertEqual(config.originMatcher.provider(for: "https://git.example.com/x"), "dot")
        let explicit = try parse(#"{"providers": [{"id": "p", "flow": ["password", "deviceCode"], "origins": ["https://a.com"], "clientId": "x", "tokenEndpoint": "https://a.com/token", "deviceAuthorizationEndpoint": "https://a.com/device"}]}"#)
        XCTAssertEqual(explicit.providers[0].flows, [.password, .deviceCode])
        XCTAssertEqual(explicit.providers[0].flowClients, [:])
    }

    /// A server that allows one grant per client (django-oauth-toolkit): a flow may name its own client;
    /// the provider-wide clientId is then needed only by the flows without one.
    func testAFlowMayHaveAClientOfItsOwn() throws {
        let config = try parse("""
        {"providers": [{"id": "dot", "flow": [{"flow": "password", "clientId": "pw"}, {"flow": "deviceCode", "clientId": "dev", "clientSecret": "s3cret"}],
                        "origins": ["https://a.com"], "issuer": "https://sso.a.com"}]}
        """)
        let dot = config.providers[0]
        XCTAssertEqual(dot.flows, [.password, .deviceCode])
        XCTAssertNil(dot.clientId)
        XCTAssertEqual(dot.using(.password).clientId, "pw")
        XCTAssertEqual(dot.using(.deviceCode).clientId, "dev")
        XCTAssertEqual(dot.using(.deviceCode).clientSecret, "s3cret")
        XCTAssertFalse("\(dot.flowClients)".contains("s3cret"), "a flow's secret stays out of descriptions")
        let mixed = try parse(#"{"providers": [{"id": "dot", "flow": ["password", {"flow": "deviceCode", "clientId": "dev"}], "clientId": "pw", "origins": ["https://a.com"], "issuer": "https://sso.a.com"}]}"#)
        XCTAssertEqual(mixed.providers[0].using(.password).clientId, "pw")
        XCTAssertEqual(mixed.providers[0].using(.deviceCode).clientId, "dev")
    }

    func testFlowsThatCannotShareAProviderAreRefused() {
        let oauth = #""origins": ["https://a.com"], "clientId": "x", "issuer": "https://a.com""#
        let cases: [(String, String, String)] = [
            (#"{"providers": [{"id": "p", "flow": ["password", "session"], \#(oauth)}]}"#, "$.providers[0].flow[1]",
             #"flow "session" cannot share a provider with other flows: only password, deviceCode, authorizationCode can be listed together"#),
            (#"{"providers": [{"id": "p", "flow": ["clientCredentials", "deviceCode"], \#(oauth)}]}"#, "$.providers[0].flow[0]",
             #"flow "clientCredentials" cannot share a provider"#),
            (#"{"providers": [{"id": "p", "flow": ["deviceCode", "token"], \#(oauth)}]}"#, "$.providers[0].flow[1]", #"flow "token" cannot share"#),
            (#"{"providers": [{"id": "p", "flow": ["password", "password"], \#(oauth)}]}"#, "$.providers[0].flow[1]", #"flow "password" is listed twice"#),
            (#"{"providers": [{"id": "p", "flow": [], \#(oauth)}]}"#, "$.providers[0].flow", "list at least one flow"),
            (#"{"providers": [{"id": "p", "flow": ["password", 3], \#(oauth)}]}"#, "$.providers[0].flow[1]", "expected a string, got a number"),
            (#"{"providers": [{"id": "p", "flow": ["password", "devicecode"], \#(oauth)}]}"#, "$.providers[0].flow[1]", #"did you mean "deviceCode"?"#),
            (#"{"providers": [{"id": "p", "flow": 3, \#(oauth)}]}"#, "$.providers[0].flow", "expected a flow's name or a list of them, got a number"),
            (#"{"providers": [{"id": "p", "flow": ["password", {"flow": "deviceCode"}], \#(oauth)}]}"#, "$.providers[0].flow[1]", #"missing required key "clientId""#),
            (#"{"providers": [{"id": "p", "flow": [{"flow": "deviceCode", "clientID": "d"}], \#(oauth)}]}"#, "$.providers[0].flow[0].clientID", #"did you mean "clientId"?"#),
            (#"{"providers": [{"id": "p", "flow": [{"flow": "deviceCode", "clientId": "d"}, "password"], "origins": ["https://a.com"], "issuer": "https://a.com"}]}"#,
             "$.providers[0]", #"flow "password" requires "clientId""#),
            // Each flow's requirements apply, and a key none of the flows uses is refused naming them all.
            (#"{"providers": [{"id": "p", "flow": ["password", "deviceCode"], "origins": ["https://a.com"], "clientId": "x", "tokenEndpoint": "https://a.com/t"}]}"#,
             "$.providers[0]", #"flow "deviceCode" requires "deviceAuthorizationEndpoint" and "tokenEndpoint", or "issuer""#),
            (#"{"providers": [{"id": "p", "flow": ["password", "deviceCode"], \#(oauth), "redirectPort": 80}]}"#,
             "$.providers[0].redirectPort", #""redirectPort" is not used by flows "password", "deviceCode""#),
            // Two providers for one server stay refused: the answer is one provider with both flows.
            (#"{"providers": [{"id": "p", "flow": "password", \#(oauth)}, {"id": "d", "flow": "deviceCode", \#(oauth)}]}"#,
             "$.providers[1].origins[0]", #"already claimed by provider "p""#),
        ]
        for (text, path, problem) in cases {
            do {
                _ = try parse(text)
                XCTFail("accepted: \(text)")
            } catch {
                XCTAssertEqual(error.path, path, "\(text)\n\(error)")
                XCTAssertTrue(error.problem.contains(problem), "\(error.problem) should contain \(problem)")
            }
        }
    }

    func testInvalidConfigs() {
        let cases: [(String, String, String)] = [
            ("{\"providers\": [}", "$", "not valid JSON: unexpected character at line 1, column 16"),
            ("{\n  \"providers\": [,]\n}", "$", "line 2, column 17"),
            ("", "$", "not valid JSON"),
            (#"{"providers": [], "providers": []}"#, "$", "duplicate key"),
            ("[]", "$", "expected an object, got an array"),
            (#"{"clients": [{"issuer": "http://as.example", "clientId": "c"}]}"#, "$.clients[0].issuer", "an issuer must be an https URL"),
            (#"{"clients": [{"issuer": "https://as.example"}]}"#, "$.clients[0]", #"missing required key "clientId""#),
            (#"{"clientMetadataUrl": "https://agent.example"}"#, "$.clientMetadataUrl", "must be an https URL with a path"),
            (#"{"learn": {"allow": ["http://api.example.com"]}}"#, "$.learn.allow[0]", "plain http on loopback only"),
            (#"{"learn": {"dpop": "yes"}}"#, "$.learn.dpop", "expected a boolean, got a string"),
            (#"{"learn": {"dop": true}}"#, "$.learn.dop", #"unknown key "dop"; did you mean "dpop"?"#),
            (#"{"clients": [{"issuer": "https://as.example", "clientId": "c", "dpop": 1}]}"#, "$.clients[0].dpop", "expected a boolean, got a number"),
            (#"{"provider": []}"#, "$.provider", #"unknown key "provider"; did you mean "providers"?"#),
            (#"{"providers": {}}"#, "$.providers", "expected an array, got an object"),
            (#"{"refreshWindowSeconds": "60", "providers": []}"#, "$.refreshWindowSeconds", "expected an integer, got a string"),
            (#"{"refreshWindowSeconds": 1.5, "providers": []}"#, "$.refreshWindowSeconds", "expected a whole number"),
            (#"{"refreshWindowSeconds": 90000, "providers": []}"#, "$.refreshWindowSeconds", "between 0 and 86400"),
            (#"{"store": "file", "providers": []}"#, "$.store", "expected an object, got a string"),
            (#"{"store": {"kind": "disk"}, "providers": []}"#, "$.store.kind", #"unknown store kind "disk""#),
            (#"{"store": {"kind": "memory", "path": "/x"}, "providers": []}"#, "$.store.path", #"only used with kind "file""#),
            (#"{"store": {"path": "state"}, "providers": []}"#, "$.store.path", "absolute path"),
            (#"{"store": {"kind": "keyring", "path": "state"}, "providers": []}"#, "$.store.path", "absolute path"),
            (#"{"store": {"kind": "Keyring"}, "providers": []}"#, "$.store.kind", #"expected "auto", "keyring", "file" or "memory""#),
            (#"{"store": {"kind": "file", "dir": "/x"}, "providers": []}"#, "$.store.dir", #"unknown key "dir""#),
            (#"{"providers": ["api"]}"#, "$.providers[0]", "expected an object, got a string"),
            (#"{"providers": [{"flow": "token", "origins": ["https://a.com"]}]}"#, "$.providers[0]", #"missing required key "id""#),
            (#"{"providers": [{"id": 5, "flow": "token", "origins": ["https://a.com"]}]}"#, "$.providers[0].id",
             "expected a string, got a number"),
            (#"{"providers": [{"id": "API", "flow": "token", "origins": ["https://a.com"]}]}"#, "$.providers[0].id", "[a-z0-9._-]+"),
            (#"{"providers": [{"id": "a/b", "flow": "token", "origins": ["https://a.com"]}]}"#, "$.providers[0].id", "[a-z0-9._-]+"),
            (#"{"providers": [{"id": "", "flow": "token", "origins": ["https://a.com"]}]}"#, "$.providers[0].id", "must not be empty"),
            ("{\"providers\": [{\(session)}, {\(password), \"tokenEndPoint\": \"https://x.com\"}]}", "$.providers[1].tokenEndPoint",
             #"unknown key "tokenEndPoint"; did you mean "tokenEndpoint"?"#),
            (#"{"providers": [{"id": "a", "flow": "token", "origins": ["https://a.com"], "Origins": []}]}"#,
             "$.providers[0].Origins", #"did you mean "origins"?"#),
            (#"{"providers": [{"id": "a", "flow": "token", "origins": ["https://a.com"], "zzz": 1}]}"#,
             "$.providers[0].zzz", #"unknown key "zzz""#),
            (#"{"providers": [{"id": "a", "flow": "client_credentials", "origins": ["https://a.com"]}]}"#,
             "$.providers[0].flow", #"did you mean "clientCredentials"?"#),
            (#"{"providers": [{"id": "a", "flow": "magic", "origins": ["https://a.com"]}]}"#,
             "$.providers[0].flow", "expected one of session, password, clientCredentials, token, deviceCode, authorizationCode"),
            (#"{"providers": [{"id": "a", "origins": ["https://a.com"]}]}"#, "$.providers[0]", #"missing required key "flow""#),
            ("{\"providers\": [{\(session)}, {\(password.replacingOccurrences(of: "corp", with: "api"))}]}", "$.providers[1].id",
             #"duplicate provider id "api" (also $.providers[0])"#),
            ("{\"providers\": [{\(session.replacingOccurrences(of: #""tokenPointer": "/jwt""#, with: #""userPointer": "/u""#))}]}",
             "$.providers[0]", #"flow "session" requires "tokenPointer""#),
            ("{\"providers\": [{\(session.replacingOccurrences(of: #""loginBody": {}, "#, with: ""))}]}",
             "$.providers[0]", #"flow "session" requires "loginBody""#),
            ("{\"providers\": [{\(password.replacingOccurrences(of: #", "clientId": "cli""#, with: ""))}]}",
             "$.providers[0]", #"flow "password" requires "clientId""#),
            (#"{"providers": [{"id": "c", "flow": "clientCredentials", "origins": ["https://a.com"], "clientId": "x"}]}"#,
             "$.providers[0]", #"flow "clientCredentials" requires "tokenEndpoint""#),
            (#"{"providers": [{"id": "d", "flow": "deviceCode", "origins": ["https://a.com"], "clientId": "x", "tokenEndpoint": "https://a.com/t"}]}"#,
             "$.providers[0]", #"requires "deviceAuthorizationEndpoint" and "tokenEndpoint", or "issuer""#),
            (#"{"providers": [{"id": "w", "flow": "authorizationCode", "origins": ["https://a.com"], "clientId": "x", "authorizationEndpoint": "https://a.com/a"}]}"#,
             "$.providers[0]", #"requires "authorizationEndpoint" and "tokenEndpoint", or "issuer""#),
            (#"{"providers": [{"id": "w", "flow": "authorizationCode", "origins": ["https://a.com"], "issuer": "https://a.com"}]}"#,
             "$.providers[0]", #"flow "authorizationCode" requires "clientId""#),
            ("{\"providers\": [{\(password), \"loginEndpoint\": \"https://a.com\"}]}", "$.providers[0].loginEndpoint",
             #""loginEndpoint" is not used by flow "password""#),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com"], "clientSecret": "s"}]}"#,
             "$.providers[0].clientSecret", #"not used by flow "token""#),
            (#"{"providers": [{"id": "t", "flow": "token"}]}"#, "$.providers[0]", #"missing required key "origins""#),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": []}]}"#, "$.providers[0].origins", "at least one origin"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": "https://a.com"}]}"#, "$.providers[0].origins",
             "expected an array, got a string"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com", 5]}]}"#, "$.providers[0].origins[1]",
             "expected a string, got a number"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["corp.example.com"]}]}"#, "$.providers[0].origins[0]",
             "not a valid origin"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com/api"]}]}"#, "$.providers[0].origins[0]",
             "no path, query or fragment"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://u:p@a.com"]}]}"#, "$.providers[0].origins[0]",
             "must not contain a user name or password"),
            ("{\"providers\": [{\(session)}, {\"id\": \"corp\", \"flow\": \"token\", \"origins\": [\"https://corp.example.com\", \"http://corp.example.com\"]}]}",
             "$.providers[1].origins[1]", "a token is never sent over plain http except to loopback"),
            ("{\"providers\": [{\(session)}, {\"id\": \"b\", \"flow\": \"token\", \"origins\": [\"https://API.example.com:443/\"]}]}",
             "$.providers[1].origins[0]", #"origin https://api.example.com is already claimed by provider "api""#),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com", "https://a.com:443"]}]}"#,
             "$.providers[0].origins[1]", "listed twice"),
            ("{\"providers\": [{\(password.replacingOccurrences(of: "https://sso", with: "http://sso"))}]}",
             "$.providers[0].tokenEndpoint", "plain http is only allowed for loopback hosts"),
            ("{\"providers\": [{\(password.replacingOccurrences(of: "https://sso", with: "https://me:pw@sso"))}]}",
             "$.providers[0].tokenEndpoint", "must not contain a user name or password"),
            ("{\"providers\": [{\(password.replacingOccurrences(of: "sso.example.com/token", with: "sso.example.com/token#x"))}]}",
             "$.providers[0].tokenEndpoint", "must not have a fragment"),
            ("{\"providers\": [{\(password.replacingOccurrences(of: "https://sso.example.com/token", with: "sso.example.com/token"))}]}",
             "$.providers[0].tokenEndpoint", "not a valid http or https URL"),
            ("{\"providers\": [{\(password), \"revocationEndpoint\": 5}]}", "$.providers[0].revocationEndpoint",
             "expected a string, got a number"),
            ("{\"providers\": [{\(session.replacingOccurrences(of: "\"/jwt\"", with: "\"jwt\""))}]}", "$.providers[0].tokenPointer",
             "not a valid JSON pointer"),
            ("{\"providers\": [{\(session.replacingOccurrences(of: "\"loginBody\": {}", with: "\"loginBody\": \"x\""))}]}",
             "$.providers[0].loginBody", "expected an object, got a string"),
            ("{\"providers\": [{\(password), \"scopes\": [\"openid profile\"]}]}", "$.providers[0].scopes[0]", "a scope is printable ASCII"),
            ("{\"providers\": [{\(password), \"scopes\": \"openid\"}]}", "$.providers[0].scopes", "expected an array, got a string"),
            (#"{"providers": [{"id": "w", "flow": "authorizationCode", "origins": ["https://a.com"], "clientId": "x", "issuer": "https://a.com", "redirectPort": 70000}]}"#,
             "$.providers[0].redirectPort", "between 1 and 65535"),
            (#"{"providers": [{"id": "w", "flow": "deviceCode", "origins": ["https://a.com"], "clientId": "x", "issuer": "https://a.com", "openBrowser": "yes"}]}"#,
             "$.providers[0].openBrowser", "expected a boolean, got a string"),
            (#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com"], "displayName": null}]}"#,
             "$.providers[0].displayName", "expected a string, got null"),
            (#"{"providers": [], "odd key": 1}"#, #"$["odd key"]"#, #"unknown key "odd key""#),
        ]
        XCTAssertGreaterThanOrEqual(cases.count, 15)
        for (text, path, problem) in cases {
            do {
                _ = try parse(text)
                XCTFail("accepted: \(text)")
            } catch {
                XCTAssertEqual(error.path, path, "\(text)\n\(error)")
                XCTAssertTrue(error.problem.contains(problem), "\(error.problem) should contain \(problem)")
                XCTAssertEqual(error.file, "config.json")
                XCTAssertEqual(error.description, "config.json: \(error.path): \(error.problem)")
            }
        }
    }

    func testSecretsStayOutOfErrorsAndDescriptions() throws {
        let config = try parse(ConfigTests.example)
        var dumped = ""
        dump(config, to: &dumped)
        for text in [String(describing: config), String(reflecting: config), dumped, String(describing: config.providers[1])] {
            XCTAssertFalse(text.contains("TOP-SECRET"), text)
            XCTAssertFalse(text.contains("{{password}}"), text)
        }
        XCTAssertThrowsError(try parse(#"{"providers": [{"id": "t", "flow": "token", "origins": ["https://a.com"], "clientSecret": "TOP-SECRET"}]}"#)) {
            XCTAssertFalse(String(describing: $0).contains("TOP-SECRET"))
        }
    }

    func testLoad() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let file = temp.url.appendingPathComponent("config.json")
        try Data(ConfigTests.example.utf8).write(to: file)
        XCTAssertEqual(try AgentConfig.load(path: file.path).providers.count, 2)

        let missing = temp.url.appendingPathComponent("absent.json").path
        XCTAssertThrowsError(try AgentConfig.load(path: missing)) { error in
            let e = error as? ConfigError
            XCTAssertEqual(e?.file, missing)
            XCTAssertEqual(e?.path, "$")
            XCTAssertEqual(e?.problem.hasPrefix("cannot read the file: "), true, "\(error)")
        }
        XCTAssertThrowsError(try AgentConfig.load(path: temp.path)) { error in
            XCTAssertEqual((error as? ConfigError)?.problem.hasPrefix("cannot read the file: "), true, "\(error)")
        }
        try Data("{\n\"providers\": [\n  {\"id\": \"x\" \"flow\": 1}\n]}".utf8).write(to: file)
        XCTAssertThrowsError(try AgentConfig.load(path: file.path)) { error in
            XCTAssertEqual(String(describing: error),
                           "\(file.path): $: not valid JSON: expected ',' or '}' in object at line 3, column 14")
        }
    }

    func testResolvePath() {
        let env = ["AUTH_AGENT_CONFIG": "/etc/agent.json", "XDG_CONFIG_HOME": "/xdg", "HOME": "/home/u"]
        XCTAssertEqual(AgentConfig.resolvePath(argument: "./c.json", environment: env), "./c.json")
        XCTAssertEqual(AgentConfig.resolvePath(argument: nil, environment: env), "/etc/agent.json")
        XCTAssertEqual(AgentConfig.resolvePath(argument: "", environment: env), "/etc/agent.json")
        XCTAssertEqual(AgentConfig.resolvePath(argument: nil, environment: ["XDG_CONFIG_HOME": "/xdg/", "HOME": "/home/u"]),
                       "/xdg/auth-agent/config.json")
        XCTAssertEqual(AgentConfig.resolvePath(argument: nil, environment: ["XDG_CONFIG_HOME": "rel", "HOME": "/home/u"]),
                       "/home/u/.config/auth-agent/config.json")
        XCTAssertEqual(AgentConfig.resolvePath(argument: nil, environment: ["AUTH_AGENT_CONFIG": "", "HOME": "/home/u"]),
                       "/home/u/.config/auth-agent/config.json")
    }

    func testLineAndColumnCountCharactersNotBytes() {
        let (line, column) = AgentConfig.lineAndColumn(Array("ab\ncü!".utf8), offset: 6)
        XCTAssertEqual([line, column], [2, 3])
        let (emptyLine, emptyColumn) = AgentConfig.lineAndColumn([], offset: 0)
        XCTAssertEqual([emptyLine, emptyColumn], [1, 1])
    }

    func testKeySuggestion() {
        let keys = ProviderConfig.knownKeys
        XCTAssertEqual(KeySuggestion.closest(to: "tokenEndPoint", among: keys), "tokenEndpoint")
        XCTAssertEqual(KeySuggestion.closest(to: "client_id", among: keys), "clientId")
        XCTAssertEqual(KeySuggestion.closest(to: "scope", among: keys), "scopes")
        XCTAssertEqual(KeySuggestion.closest(to: "redirectUri", among: keys), nil)
        XCTAssertEqual(KeySuggestion.editDistance("kitten", "sitting"), 3)
        XCTAssertEqual(KeySuggestion.editDistance("", "abc"), 3)
    }
}
