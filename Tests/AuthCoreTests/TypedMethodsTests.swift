@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import XCTest

/// Issue 30: a method's params and result are declared once (`RPCMethod`) for both ends — what
/// a Swift host (the command line) encodes, the handler decodes to the same values, and what the
/// handler answers, the host reads back whole. A field one side forgot fails here.
final class TypedMethodsTests: XCTestCase {
    private func params<M: RPCMethod>(_ method: M.Type, _ p: M.Params) throws -> M.Params {
        try M.decode(params: RPCParams(M.encode(p)))
    }

    private func result<M: RPCMethod>(_ method: M.Type, _ r: M.Result) throws -> M.Result {
        try M.decode(result: JSONParser.parse(JSONSerializer.string(M.encode(result: r))))
    }

    private let shape = TokenShape(scopes: ["b", "a"], audience: "api", resource: "https://api.example/")
    private let when = RFC3339.parse("2030-01-02T03:04:05Z")!

    func testParamsSurviveTheWireBothWays() throws {
        let token = try params(TokenMethod.self, .init(provider: "corp", account: "bob", shape: shape, bearer: true, minValidSeconds: 30))
        XCTAssertEqual([token.provider, token.account], ["corp", "bob"])
        XCTAssertEqual(token.shape, shape)
        XCTAssertEqual(token.bearer, true)
        XCTAssertEqual(token.minValidSeconds, 30)
        let plain = try params(TokenMethod.self, .init(provider: "corp"))
        XCTAssertNil(plain.account)
        XCTAssertNil(plain.shape)
        XCTAssertFalse(plain.bearer)
        XCTAssertNil(plain.minValidSeconds)

        let refresh = try params(RefreshMethod.self, .init(provider: "corp", account: "a", failedAuthorization: "Bearer x"))
        XCTAssertEqual([refresh.provider, refresh.account, refresh.failedAuthorization], ["corp", "a", "Bearer x"])

        let sign = try params(SignMethod.self, .init(method: "POST", url: "https://api.example/x", provider: "corp", account: "a", shape: shape))
        XCTAssertEqual([sign.method, sign.url, sign.provider, sign.account], ["POST", "https://api.example/x", "corp", "a"])
        XCTAssertEqual(sign.shape, shape)

        let logout = try params(LogoutMethod.self, .init(provider: "corp", all: true))
        XCTAssertEqual(logout.provider, "corp")
        XCTAssertTrue(logout.all)
        XCTAssertThrowsError(try params(LogoutMethod.self, .init(provider: "corp", account: "a", all: true)), "'all' names no account")
        XCTAssertEqual(try params(ForgetMethod.self, "learned-1"), "learned-1")

        let login = try params(LoginMethod.self, .init(.provider("corp"), flow: .password, credentials: .password(username: "u", password: "p"), openBrowser: false))
        XCTAssertEqual(login.target, .provider("corp"))
        XCTAssertEqual(login.flow, .password)
        guard case .password(let username, let password)? = login.credentials else { return XCTFail("no password credentials") }
        XCTAssertEqual([username, password], ["u", "p"])
        XCTAssertEqual(login.openBrowser, false)
        let learn = try params(LoginMethod.self, .init(.resource("https://api.example/mcp"), flow: .deviceCode))
        XCTAssertEqual(learn.target, .resource("https://api.example/mcp"))
        XCTAssertEqual(learn.flow, .deviceCode)
        XCTAssertThrowsError(try params(LoginMethod.self, .init(.resource("https://api.example/"), flow: .password)), "a learned API has no password login")

        var request = FetchRequest(method: "PUT", url: "https://api.example/doc", headers: [("Content-Type", "application/json")], body: [0, 1, 2, 255],
                                   timeout: 5, maxResponseBytes: 1024)
        request.headers.append(("X-Trace", "1"))
        let fetch = try params(FetchMethod.self, .init(request, provider: "corp", account: "a", shape: shape, login: .ifNeeded, openBrowser: true))
        XCTAssertEqual([fetch.request.method, fetch.request.url, fetch.provider, fetch.account], ["PUT", "https://api.example/doc", "corp", "a"])
        XCTAssertEqual(fetch.request.headers.map { "\($0): \($1)" }.sorted(), ["Content-Type: application/json", "X-Trace: 1"])
        XCTAssertEqual(fetch.request.body, [0, 1, 2, 255])
        XCTAssertEqual(fetch.request.timeout, 5)
        XCTAssertEqual(fetch.request.maxResponseBytes, 1024)
        XCTAssertEqual(fetch.shape, shape)
        XCTAssertEqual(fetch.login, .ifNeeded)
        XCTAssertEqual(fetch.openBrowser, true)

        let complete = try params(CompleteLoginMethod.self, .init(requestId: 7, redirectUrl: "http://127.0.0.1:1/callback?code=c&state=s"))
        XCTAssertEqual(complete.requestId, 7)
        XCTAssertEqual(complete.redirectUrl, "http://127.0.0.1:1/callback?code=c&state=s")
    }

    func testResultsSurviveTheWireBothWays() throws {
        var token = TokenResult(accessToken: "at", tokenType: "DPoP", expiresAt: when)
        XCTAssertEqual(try result(TokenMethod.self, token), token)
        (token.refreshed, token.askedValidity) = (true, true)
        XCTAssertEqual(try result(TokenMethod.self, token), token, "refreshed is said when minValidSeconds was asked")

        let refresh = RefreshResult(provider: "corp", account: "", refreshed: false, expiresAt: nil)
        XCTAssertEqual(try result(RefreshMethod.self, refresh), refresh)

        let signed = SignMethod.Result(provider: "corp", authorization: "Bearer t", proof: "proof", expiresAt: when)
        XCTAssertEqual(try result(SignMethod.self, signed), signed)
        XCTAssertEqual(signed.bearerToken, "t")
        XCTAssertEqual(try result(SignMethod.self, SignMethod.Result()), SignMethod.Result(), "unsigned")
        XCTAssertNil(SignMethod.Result(provider: "p", authorization: "DPoP t").bearerToken, "a DPoP token is no bearer token")

        let login = LoginResult(provider: "corp", account: "a1", user: ["name": "Alice"], expiresAt: when)
        XCTAssertEqual(try result(LoginMethod.self, login), login)
        XCTAssertEqual(try result(LogoutMethod.self, true), true)
        XCTAssertEqual(try result(ForgetMethod.self, false), false)

        var fetched = FetchResponse(status: 401, headers: ["content-type": "application/octet-stream"], body: [0, 159, 146, 150], provider: nil,
                                    signed: false, retried: false)
        fetched.login = LoginHint(resource: "https://api.example/", authorizationServer: "https://id.example", scopes: ["read"], resourceMetadata: nil)
        XCTAssertEqual(try result(FetchMethod.self, fetched), fetched, "a binary body crosses as base64")
        let text = FetchResponse(status: 200, headers: ["content-type": "application/json"], body: Array(#"{"ok":true}"#.utf8), provider: "corp",
                                 signed: true, retried: true)
        XCTAssertEqual(try result(FetchMethod.self, text), text)

        XCTAssertThrowsError(try TokenMethod.decode(result: ["tokenType": "Bearer"]), "a token result without its token is an error, not an empty token")
        XCTAssertThrowsError(try StatusMethod.decode(result: [:]))
    }
}
