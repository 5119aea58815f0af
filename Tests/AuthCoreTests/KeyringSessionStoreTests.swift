@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import XCTest

/// The keyring store over a fake keyring: what goes where, the write order that
/// keeps a record from pointing at a missing secret, migration and tidying at
/// start, and `auto`'s choice.
final class KeyringSessionStoreTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let secrets = FakeSecretStore()
    private let warnings = WarningLog()

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    private func files() throws -> FileSessionStore { try FileSessionStore(directory: directory.url, warn: warnings.sink) }
    private func store() throws -> KeyringSessionStore {
        KeyringSessionStore(records: try files(), secrets: secrets, labels: ["corp": "Corp SSO"], warn: warnings.sink)
    }

    private func session(_ n: Int) -> Session {
        Session(accessToken: "access-secret-\(n)", refreshToken: "refresh-secret-\(n)", expiresAt: Date(timeIntervalSince1970: 1_900_000_000),
                idToken: "id-secret-\(n)", user: ["name": "Alice"], obtainedAt: Date(timeIntervalSince1970: 1_800_000_000), generation: n)
    }

    private func recordText() throws -> String {
        try String(contentsOf: directory.url.appendingPathComponent("corp.json"), encoding: .utf8)
    }

    func testTheFileHoldsTheRecordAndTheKeyringTheTokens() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        let record = try recordText()
        XCTAssertFalse(record.contains("-secret-"), record)
        XCTAssertTrue(record.contains("\"secretItem\":\"1-"), record)
        XCTAssertTrue(record.contains("Alice"), record)
        XCTAssertEqual(secrets.secrets.count, 1)
        XCTAssertTrue(secrets.secrets[0].contains("access-secret-1") && secrets.secrets[0].contains("refresh-secret-1"))
        XCTAssertEqual(try s.load("corp"), session(1))
        // A second store on the same directory (another agent) reads the same session.
        XCTAssertEqual(try store().load("corp"), session(1))
    }

    func testASaveReplacesTheItemAndARemoveDeletesIt() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        try s.save(session(2), for: "corp")
        XCTAssertEqual(try secrets.items(provider: "corp").count, 1, "the old generation's item is deleted")
        XCTAssertEqual(try s.load("corp"), session(2))
        try s.remove("corp")
        XCTAssertNil(try s.load("corp"))
        XCTAssertEqual(try secrets.items(provider: "corp"), [])
    }

    /// A failing keyring write changes nothing: the old session still loads whole.
    func testAFailedSecretWriteLeavesTheOldSession() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        secrets.failWrites.set(true)
        XCTAssertThrowsError(try s.save(session(2), for: "corp"))
        secrets.failWrites.set(false)
        XCTAssertEqual(try s.load("corp"), session(1))
    }

    /// A crash after the new item was written but before the record: the old
    /// session loads, and the next start deletes the dangling item.
    func testADanglingItemFromACrashIsDeletedAtStart() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        try secrets.write("{\"accessToken\":\"access-secret-2\"}", provider: "corp", item: "2-crashed", label: "x", account: nil)
        XCTAssertEqual(try s.load("corp"), session(1))
        s.prepare(providers: ["corp"], lockTimeout: 1)
        XCTAssertEqual(try secrets.items(provider: "corp").count, 1)
        XCTAssertFalse(try secrets.items(provider: "corp").contains("2-crashed"))
        XCTAssertEqual(try s.load("corp"), session(1))
    }

    func testFileStoreSessionsMoveIntoTheKeyringOnce() throws {
        try files().save(session(3), for: "corp")
        XCTAssertTrue(try recordText().contains("access-secret-3"))
        let s = try store()
        s.prepare(providers: ["corp"], lockTimeout: 1)
        XCTAssertFalse(try recordText().contains("-secret-"), "no token left in the file")
        var expected = session(3)
        expected.generation = 4
        XCTAssertEqual(try s.load("corp"), expected)
        XCTAssertEqual(warnings.all.filter { $0.contains("moved the tokens of corp") }.count, 1)
        s.prepare(providers: ["corp"], lockTimeout: 1)
        XCTAssertEqual(try s.load("corp"), expected, "a second start changes nothing")
        XCTAssertEqual(warnings.all.filter { $0.contains("moved the tokens") }.count, 1)
    }

    /// Migration with the keyring locked: nothing moves, nothing is lost.
    func testMigrationWithALockedKeyringLosesNothing() throws {
        try files().save(session(3), for: "corp")
        secrets.locked.set(true)
        let s = try store()
        s.prepare(providers: ["corp"], lockTimeout: 1)
        XCTAssertTrue(try recordText().contains("access-secret-3"))
        XCTAssertEqual(try s.load("corp"), session(3))
    }

    func testALockedKeyringIsUnavailableNotLoggedOut() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        secrets.locked.set(true)
        XCTAssertThrowsError(try s.load("corp")) { error in
            XCTAssertEqual(error as? SessionStoreError, .unavailable("the keyring is locked"))
        }
        secrets.locked.set(false)
        XCTAssertEqual(try s.load("corp"), session(1))
    }

    func testAnItemDeletedOutsideTheAgentIsALoggedOutProviderWithAWarning() throws {
        let s = try store()
        try s.save(session(1), for: "corp")
        for item in try secrets.items(provider: "corp") { try secrets.delete(provider: "corp", item: item) }
        XCTAssertNil(try s.load("corp"))
        XCTAssertEqual(warnings.all.filter { $0.contains("has no item") }.count, 1)
        XCTAssertFalse(warnings.all.joined().contains("secret-"), "no secret in a warning")
    }

    // MARK: auto

    private func keyring(answers: Bool) -> StoreOpening.Keyring {
        let secrets = self.secrets
        return StoreOpening.Keyring(probe: { _ in answers ? nil : "no Secret Service on the session bus: nobody home" }, open: { _ in secrets })
    }

    /// `auto` asks nothing at start; the first save decides (see also `AutoStoreTests`).
    func testAutoWithoutAKeyringKeepsASaveInItsFileAndSaysSoOnce() throws {
        let (store, status) = try StoreOpening.open(.auto(path: directory.path + "/store"), providers: [], environment: [:], lockTimeout: 1,
                                                    keyring: keyring(answers: false), warn: warnings.sink)
        XCTAssertEqual(status.kind, .auto)
        XCTAssertEqual(warnings.all, [])
        try store.save(session(1), for: "corp")
        try store.save(session(2), for: "corp")
        XCTAssertEqual((store as? StoreStatusReporting)?.storeStatus, StoreStatus(kind: .file, reason: "no Secret Service on the session bus: nobody home"))
        XCTAssertEqual(warnings.all.count, 1)
        XCTAssertTrue(warnings.all[0].hasPrefix("no Secret Service on the session bus: nobody home"), warnings.all[0])
        XCTAssertEqual(secrets.secrets, [])
        XCTAssertEqual(try store.load("corp"), session(2))
    }

    func testAutoWithAKeyringPutsASaveInIt() throws {
        let (store, status) = try StoreOpening.open(.auto(path: directory.path + "/store"), providers: [], environment: [:], lockTimeout: 1,
                                                    keyring: keyring(answers: true), warn: warnings.sink)
        XCTAssertEqual(status.kind, .auto)
        try store.save(session(1), for: "corp")
        XCTAssertEqual((store as? StoreStatusReporting)?.storeStatus, StoreStatus(kind: .keyring))
        XCTAssertEqual(secrets.secrets.count, 1)
        XCTAssertEqual(warnings.all, [])
    }

    func testAnExplicitKeyringThatDoesNotAnswerIsAnError() throws {
        XCTAssertThrowsError(try StoreOpening.open(.keyring(path: directory.path + "/store"), providers: [], environment: [:], lockTimeout: 1,
                                                   keyring: keyring(answers: false), warn: warnings.sink)) { error in
            XCTAssertTrue("\(error)".contains("no Secret Service on the session bus: nobody home"), "\(error)")
        }
    }

    // MARK: Through the service

    private func service(_ store: SessionStore, events: TestBox<[AuthEvent]>) -> AuthService {
        let config = AgentConfig(store: .keyring(path: nil), providers: [
            ProviderConfig(id: "pat", displayName: "Personal token", flow: .token, origins: [Origin(url: "https://api.example.com")!]),
        ])
        return AuthService(config: config, store: store, storeStatus: StoreStatus(kind: .keyring), transport: SystemHTTPTransport(),
                           logger: Logger(level: .error, sink: { _ in }), lockTimeout: 1,
                           events: { event in events.update { $0.append(event) } })
    }

    private static func token(_ service: AuthService) async throws -> String? {
        try await service.token(provider: "pat").accessToken
    }

    /// A fresh agent that finds the keyring locked answers 1010 (not "not logged
    /// in"), announces no logout, and works once the keyring is unlocked.
    func testALockedKeyringAnswers1010AndTheNextRequestAfterUnlockingWorks() async throws {
        let events = TestBox<[AuthEvent]>([])
        let first = service(try store(), events: events)
        _ = try await first.login(provider: "pat", credentials: .token("pasted-secret"))
        XCTAssertEqual(AuthMethods.statusResult(first.status(), store: first.storeStatus)["store"], ["kind": "keyring"])

        secrets.locked.set(true)
        let second = service(try store(), events: events)
        do {
            _ = try await Self.token(second)
            XCTFail("expected 1010")
        } catch let error as AuthError {
            XCTAssertEqual(error.code, .storeUnavailable)
            XCTAssertEqual(error.rpcError.code, 1010)
            XCTAssertTrue(error.message.contains("the keyring is locked"), error.message)
            XCTAssertFalse(error.message.contains("pasted-secret"))
        }
        secrets.locked.set(false)
        let token = try await Self.token(second)
        XCTAssertEqual(token, "pasted-secret")
        XCTAssertEqual(events.get().filter { $0.name == .userLoggedOut }.count, 0)
    }

    /// A login while the keyring is locked cannot be kept: 1010, and nothing is installed or announced.
    func testALoginWithTheKeyringLockedAnswers1010AndLeavesNothing() async throws {
        let events = TestBox<[AuthEvent]>([])
        let agent = service(try store(), events: events)
        secrets.locked.set(true)
        do {
            _ = try await agent.login(provider: "pat", credentials: .token("pasted-secret"))
            XCTFail("expected 1010")
        } catch {
            XCTAssertEqual(error.code, .storeUnavailable)
        }
        XCTAssertNil(agent.status().first?.session, "nothing installed")
        XCTAssertEqual(events.get(), [], "nothing announced")
        secrets.locked.set(false)
        _ = try await agent.login(provider: "pat", credentials: .token("pasted-secret"))
        let token = try await Self.token(agent)
        XCTAssertEqual(token, "pasted-secret")
    }

    /// Another agent changed the record while this one's keyring is locked: the
    /// session in memory stays, nobody is logged out, and it keeps signing.
    func testALockedKeyringDuringTheWatchLogsNobodyOut() async throws {
        let events = TestBox<[AuthEvent]>([])
        let store = try store()
        let agent = service(store, events: events)
        _ = try await agent.login(provider: "pat", credentials: .token("pasted-secret"))
        secrets.locked.set(true)
        // Another agent's write: same record, new file (the watch's stamp changes).
        let key = StoreKeys.account("default", of: "pat")
        let record = try Data(contentsOf: directory.url.appendingPathComponent("\(key).json"))
        try store.records.saveRecord([UInt8](record), for: key)
        agent.checkStore()
        XCTAssertEqual(events.get().filter { $0.name == .userLoggedOut }.count, 0)
        let token = try await Self.token(agent)
        XCTAssertEqual(token, "pasted-secret")
    }
}
