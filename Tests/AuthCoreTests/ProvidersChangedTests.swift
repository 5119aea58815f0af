@testable import AuthCore
import JSONRPC
import Logging
import TestSupport
import XCTest

/// `providersChanged` (issue 21, item 3): a learned or forgotten API is announced once, by the
/// process that changed the set and by every other process when its store check picks it up,
/// and never again for the same change.
final class ProvidersChangedTests: XCTestCase {
    func testLearningAndForgettingAreAnnouncedOnceHereAndInAnotherProcess() async throws {
        let server = FakeAPI()
        let store = MemorySessionStore()
        let (here, heard) = makeService(server, store: store)
        let (there, heardThere) = makeService(server, store: store)
        let id = "api.example"

        _ = try await here.login(resource: FakeAPI.resource, context: LoginContext(prompt: LearningTests.playBrowser(server)))
        here.checkStore()  // its own change, read back from the store: not announced again
        XCTAssertEqual(heard.get(), [.providersChanged(added: [id], removed: [])])
        there.checkStore()
        there.checkStore()
        XCTAssertEqual(heardThere.get(), [.providersChanged(added: [id], removed: [])], "once, when the store check finds it")

        // Logging in again to a known provider leaves the set as it is.
        _ = try await here.login(resource: FakeAPI.resource, context: LoginContext(prompt: LearningTests.playBrowser(server)))
        XCTAssertEqual(heard.get().count, 1)

        _ = try await here.forget(provider: id)
        here.checkStore()
        XCTAssertEqual(heard.get().last, .providersChanged(added: [], removed: [id]))
        XCTAssertEqual(heard.get().count, 2)
        there.checkStore()
        XCTAssertEqual(heardThere.get(), [.providersChanged(added: [id], removed: []), .providersChanged(added: [], removed: [id])])
    }

    /// The service and the `providersChanged` events it sent (the account events left out).
    private func makeService(_ server: FakeAPI, store: SessionStore) -> (AuthService, TestBox<[AuthEvent]>) {
        let heard = TestBox<[AuthEvent]>([])
        let service = AuthService(config: AgentConfig(), store: store, transport: server, logger: Logger(level: .error, sink: { _ in }),
                                  events: { event in if event.name == .providersChanged { heard.update { $0.append(event) } } })
        return (service, heard)
    }
}
