@testable import AuthCore
import Foundation
import JSON
import TestSupport
import Wire
import XCTest

/// The device-code flow's polling (RFC 8628 §3.4–3.5) against a scripted server
/// and a fake clock: intervals, slow_down, expiry and denial in milliseconds.
final class DeviceCodePollingTests: XCTestCase {
    /// Answers the device authorization request, then each poll from `polls` in order.
    final class DeviceServer: HTTPTransport, @unchecked Sendable {
        let polls: TestBox<[String]>
        let pollCount = TestBox(0)
        let expiresIn: Int
        /// When set, the poll with this number waits for `release()` before answering.
        var holdPoll: Int?
        private let held = TestBox<CheckedContinuation<Void, Never>?>(nil)

        func release() { held.update { c -> CheckedContinuation<Void, Never>? in defer { c = nil }; return c }?.resume() }
        var isHolding: Bool { held.get() != nil }

        init(polls: [String], expiresIn: Int = 600) {
            self.polls = TestBox(polls)
            self.expiresIn = expiresIn
        }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            if request.url.hasSuffix("/device") {
                return json(200, ["device_code": "dc", "user_code": "ABCD-EFGH", "verification_uri": "https://id.example.com/activate",
                                  "expires_in": .int(Int64(expiresIn)), "interval": 5])
            }
            let n = pollCount.update { $0 += 1; return $0 }
            if n == holdPoll { await withCheckedContinuation { c in held.set(c) } }
            let answer = polls.update { $0.isEmpty ? "authorization_pending" : $0.removeFirst() }
            if answer == "ok" {
                return json(200, ["access_token": "at", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "rt"])
            }
            return json(400, ["error": .string(answer)])
        }

        private func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
            HTTPResponse(status: status, headers: ["Content-Type": "application/json"], body: JSONSerializer.bytes(value))
        }
    }

    private let clock = FakeClock()

    private func login(_ server: DeviceServer) async -> Result<Session, AuthError> {
        await Self.login(server, clock: clock)
    }

    private static func login(_ server: DeviceServer, clock: FakeClock) async -> Result<Session, AuthError> {
        var config = ProviderConfig(id: "tv", flow: .deviceCode)
        config.deviceAuthorizationEndpoint = "https://id.example.com/device"
        config.tokenEndpoint = "https://id.example.com/token"
        config.clientId = "cli"
        let http = HTTPCalls(transport: server, timeout: 5)
        let oauth = OAuthClient(config: config, http: http, clock: clock, discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        let provider = DeviceCodeProvider(config: config, oauth: oauth, clock: clock, revokeTimeout: 1, browser: BrowserLauncher())
        do {
            return .success(try await provider.login(nil, context: LoginContext()))
        } catch {
            return .failure(error)
        }
    }

    func testPollsAtTheIntervalAndSlowDownAddsFiveSecondsForEveryLaterPoll() async throws {
        let server = DeviceServer(polls: ["authorization_pending", "slow_down", "authorization_pending", "ok"])
        let session = try await login(server).get()
        XCTAssertEqual(session.accessToken, "at")
        XCTAssertEqual(clock.sleeps.get(), [5, 5, 10, 10])
        XCTAssertEqual(server.pollCount.get(), 4)
    }

    func testAnExpiredDeviceCodeEndsTheLoginWithoutPollingPastIt() async {
        let server = DeviceServer(polls: [], expiresIn: 12)
        let result = await login(server)
        XCTAssertEqual(result.failure?.code, .loginTimedOut)
        XCTAssertEqual(clock.sleeps.get(), [5, 5, 5])
        XCTAssertEqual(server.pollCount.get(), 2, "the third wake-up is past the deadline: no poll")
    }

    func testTheServerSayingExpiredOrDeniedEndsTheLogin() async {
        let expired = await login(DeviceServer(polls: ["authorization_pending", "expired_token"]))
        XCTAssertEqual(expired.failure?.code, .loginTimedOut)
        let denied = await login(DeviceServer(polls: ["access_denied"]))
        XCTAssertEqual(denied.failure?.code, .loginDenied)
    }

    func testCancellingTheLoginStopsPolling() async throws {
        let server = DeviceServer(polls: [])
        server.holdPoll = 2
        let clock = self.clock
        let task = Task.detached { [server, clock] in await DeviceCodePollingTests.login(server, clock: clock) }
        for _ in 0..<5000 where !server.isHolding { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(server.isHolding, "the second poll is under way")
        task.cancel()
        server.release()
        let result = await task.value
        XCTAssertEqual(result.failure?.code, .loginDenied)
        XCTAssertEqual(server.pollCount.get(), 2, "no poll after the cancel")
    }
}

private extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
