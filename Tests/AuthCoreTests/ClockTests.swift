@testable import AuthCore
import Foundation
import JSONRPC
import Logging
import TestSupport
import XCTest

/// The core's waits on its `Clock`, driven by the fake clock: the store lock's wait, a login's
/// deadline and the store watch, each in milliseconds of real time whatever the clock says.
final class ClockTests: XCTestCase {
    private let clock = FakeClock()

    func testADeadlineIsTheClocksTime() async throws {
        let deadline = clock.deadline(after: 300)
        XCTAssertEqual(clock.remaining(until: deadline), 300)
        try await clock.sleep(until: deadline)
        XCTAssertEqual(clock.remaining(until: deadline), 0)
        XCTAssertEqual(clock.sleeps.get(), [300])
        try await clock.sleep(until: deadline)
        XCTAssertEqual(clock.sleeps.get(), [300, 0], "a deadline already passed does not wait")
    }

    func testTheStoreLockWaitEndsWhenTheClockPassesItsDeadline() async throws {
        let (store, clock) = (MemorySessionStore(), clock)
        let held = try XCTUnwrap(try store.tryLock("corp"))
        defer { held.unlock() }
        let started = Date()
        let start = clock.now()
        let waiter = Task { () -> Error? in
            do {
                _ = try await store.lock("corp", timeout: 15, clock: clock)
                return nil
            } catch {
                return error
            }
        }
        while clock.now() == start { try await Task.sleep(nanoseconds: 1_000_000) }  // it waits: each pause moves the clock
        clock.advance(15)
        let error = await waiter.value
        XCTAssertEqual(error as? SessionStoreError, .lockTimeout(provider: "corp"))
        XCTAssertLessThan(Date().timeIntervalSince(started), 5, "15 s of the clock, not of the wall")
    }

    func testTheStoreLockWaitTakesTheLockOnceItIsFreed() async throws {
        let (store, clock) = (MemorySessionStore(), clock)
        let held = try XCTUnwrap(try store.tryLock("corp"))
        let start = clock.now()
        let waiter = Task { try await store.lock("corp", timeout: 15, clock: clock) }
        while clock.now() == start { try await Task.sleep(nanoseconds: 1_000_000) }
        held.unlock()
        let taken = try await waiter.value
        defer { taken.unlock() }
        XCTAssertNil(try store.tryLock("corp"), "the waiter holds it")
        XCTAssertLessThan(clock.now().timeIntervalSince(start), 5)
    }

    func testABrowserLoginEndsAtItsDeadlineOnTheClock() async throws {
        var config = ProviderConfig(id: "web", displayName: "Web", flow: .authorizationCode)
        config.authorizationEndpoint = "https://id.example.com/authorize"
        config.tokenEndpoint = "https://id.example.com/token"
        config.clientId = "cli"
        let http = HTTPCalls(transport: NoServer(), timeout: 5)
        let oauth = OAuthClient(config: config, http: http, clock: clock, discovery: Discovery(http: http), lifetimeWarning: WarnOnce { _ in })
        let provider = AuthorizationCodeProvider(config: config, oauth: oauth, clock: clock, revokeTimeout: 1,
                                                 browser: BrowserLauncher(), callbackTimeout: 300)
        let start = clock.now()
        let expires = TestBox<Date?>(nil)
        let began = Date()
        do {
            _ = try await provider.login(nil, context: LoginContext(openBrowser: false, prompt: { prompt, _ in
                if case .browser(_, let at) = prompt { expires.set(at) }
            }))
            XCTFail("the login ended without its callback")
        } catch {
            XCTAssertEqual(error.code, .loginTimedOut)
        }
        XCTAssertEqual(expires.get(), start.addingTimeInterval(300), "the prompt shows the deadline the login keeps")
        XCTAssertEqual(clock.now(), start.addingTimeInterval(300))
        XCTAssertLessThan(Date().timeIntervalSince(began), 5, "five minutes of the clock, not of the wall")
    }

    func testTheStoreWatchTicksOnTheClockAndStopsWithItsService() {
        var sync: StoreSync? = StoreSync(store: MemorySessionStore(), logger: Logger(level: .error, sink: { _ in }), lockTimeout: 1,
                                         clock: clock, events: { _ in })
        let ticks = TestBox(0)
        sync?.watch(every: 0.25) {
            ticks.update { $0 += 1 }
            return []
        }
        XCTAssertEqual(ticks.get(), 1, "at once")
        clock.advance(0.2)
        XCTAssertEqual(ticks.get(), 1)
        clock.advance(0.05)
        XCTAssertEqual(ticks.get(), 2)
        clock.advance(1)
        XCTAssertEqual(ticks.get(), 6)
        sync = nil
        clock.advance(1)
        XCTAssertEqual(ticks.get(), 6, "no watch outlives its service")
    }

    private struct NoServer: HTTPTransport {
        func send(_ request: HTTPRequest) async throws -> HTTPResponse { HTTPResponse(status: 500) }
    }
}
