@testable import AuthCore
import Foundation
import Logging
import TestSupport
import XCTest

/// A login that finds its provider's login lock held says it waits only once the wait is noticeable:
/// a login cancelled a moment ago (its lock released as its task unwinds, just after the host was
/// answered -32800) or another process's login ending does not make the next one print
/// "another login … is in progress".
final class OneLoginQuietWaitTests: XCTestCase {
    private func service(_ store: MemorySessionStore) -> AuthService {
        AuthService(config: AgentConfig(store: .memory, providers: [ProviderConfig(id: "p", flow: .deviceCode)]), store: store,
                    transport: SystemHTTPTransport(), clock: SystemClock(), logger: Logger(level: .warn, sink: { _ in }),
                    httpTimeout: 1, lockTimeout: 1, events: { _ in })
    }

    private func login(_ service: AuthService, heldFor seconds: Double, store: MemorySessionStore) async throws -> [String] {
        let held = try XCTUnwrap(try store.tryLoginLock("p"))
        let said = TestBox<[String]>([])
        Task.detached {
            try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            held.unlock()
        }
        let context = LoginContext(waiting: { message in said.update { $0.append(message) } })
        let result = try await service.oneLogin("p", provider: nil, context: context, joining: { nil }) { () async throws(AuthError) in
            LoginResult(provider: "p", account: "alice", user: [:], expiresAt: nil)
        }
        XCTAssertEqual(result.account, "alice", "the login ran once the lock was free")
        return said.get()
    }

    func testALockReleasedAtOnceIsWaitedForSilently() async throws {
        let store = MemorySessionStore()
        let said = try await login(service(store), heldFor: 0.05, store: store)
        XCTAssertEqual(said, [], "a lock released within the quiet wait is not announced")
    }

    func testALongerWaitIsAnnouncedOnce() async throws {
        let store = MemorySessionStore()
        let said = try await login(service(store), heldFor: AuthService.quietLoginWait + 0.5, store: store)
        XCTAssertEqual(said.count, 1, "\(said)")
        XCTAssertTrue(said.first?.contains("another login to p is in progress") == true, "\(said)")
    }
}
