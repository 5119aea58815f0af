@testable import AuthCore
import Foundation
import JSON
import JSONRPC
import Logging
import TestSupport
import XCTest

/// `store.kind: auto` decides where tokens go when it writes them and records it;
/// a read follows the record. A record that points to the keyring is never set
/// aside by a process that cannot read the keyring, and a start that reads only
/// records kept in files never reaches for the keyring.
final class AutoStoreTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let secrets = FakeSecretStore()
    private let warnings = WarningLog()
    /// How often the keyring was asked whether it answers, and opened.
    private let probes = TestBox(0)
    private let opens = TestBox(0)

    override func setUpWithError() throws { directory = try TemporaryDirectory() }
    override func tearDown() { directory.remove() }

    private var storePath: String { directory.path + "/store" }

    /// A keyring that answers (`nil`) or not (the reason), counting every use.
    private func keyring(_ failure: String?) -> StoreOpening.Keyring {
        let (secrets, probes, opens) = (self.secrets, self.probes, self.opens)
        return StoreOpening.Keyring(probe: { _ in probes.update { $0 += 1 }; return failure },
                                    open: { _ in opens.update { $0 += 1 }; return secrets })
    }

    private static let noBus = "no Secret Service on the session bus: nobody home"

    private func open(_ config: StoreConfig, keyring failure: String?) throws -> SessionStore {
        try StoreOpening.open(config, providers: [Self.pat], environment: [:], lockTimeout: 1, keyring: keyring(failure),
                              warn: warnings.sink).0
    }

    private static let pat = ProviderConfig(id: "pat", displayName: "Personal token", flow: .token, origins: [Origin(url: "https://api.example.com")!])

    private func service(_ store: SessionStore) -> AuthService {
        AuthService(config: AgentConfig(store: .auto(path: nil), providers: [Self.pat]), store: store, transport: SystemHTTPTransport(),
                    logger: Logger(level: .error, sink: { _ in }), lockTimeout: 1, events: { _ in })
    }

    private var key: String { StoreKeys.account("default", of: "pat") }

    private func storeFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: storePath).sorted()
    }

    /// The data-loss bug: a process without the keyring (ssh, cron) read a keyring
    /// record as a session without tokens and renamed it `.corrupt-<time>`.
    func testAKeyringRecordReadWithoutTheKeyringIsHeldThereNotSetAside() async throws {
        let withKeyring = service(try open(.auto(path: storePath), keyring: nil))
        _ = try await withKeyring.login(provider: "pat", credentials: .token("pasted-secret"))
        XCTAssertTrue(try String(contentsOfFile: "\(storePath)/\(key).json", encoding: .utf8).contains("secretItem"))

        for config in [StoreConfig.auto(path: storePath), .file(path: storePath)] {
            let elsewhere = service(try open(config, keyring: Self.noBus))
            do {
                _ = try await elsewhere.token(provider: "pat")
                XCTFail("expected 1010 for \(config)")
            } catch {
                XCTAssertEqual(error.code, .storeUnavailable, "\(config)")
                XCTAssertTrue(error.message.contains("held in the keyring, not readable here"), error.message)
            }
            let status = try XCTUnwrap(elsewhere.status().first)
            XCTAssertEqual(status.unreadable.map(\.account), ["default"], "status says so (\(config))")
            XCTAssertTrue(status.unreadable.first?.reason.contains("held in the keyring, not readable here") == true)
            let files = try storeFiles()
            XCTAssertFalse(files.contains { $0.contains(".corrupt-") }, "nothing set aside (\(config)): \(files)")
            XCTAssertTrue(files.contains("\(key).json"), "\(files)")
        }
        XCTAssertFalse(warnings.all.contains { $0.contains("could not be read") }, "\(warnings.all)")
        let token = try await service(try open(.auto(path: storePath), keyring: nil)).token(provider: "pat").accessToken
        XCTAssertEqual(token, "pasted-secret", "the account is still logged in where the keyring answers")
    }

    /// Files chosen at the login: a later start reads them without probing the keyring or loading it.
    func testAFileOnlyAutoStartNeverReachesForTheKeyring() async throws {
        let first = service(try open(.auto(path: storePath), keyring: Self.noBus))
        XCTAssertEqual(first.storeStatus?.kind, .auto, "nothing stored yet: nothing decided")
        XCTAssertEqual(probes.get(), 0, "an empty store is opened without asking the keyring")
        _ = try await first.login(provider: "pat", credentials: .token("pasted-secret"))
        XCTAssertEqual(probes.get(), 1, "the login decides")
        XCTAssertEqual(opens.get(), 0)

        probes.set(0)
        let later = service(try open(.auto(path: storePath), keyring: Self.noBus))
        let token = try await later.token(provider: "pat").accessToken
        XCTAssertEqual(token, "pasted-secret")
        XCTAssertEqual(later.storeStatus, StoreStatus(kind: .file, reason: Self.noBus), "status keeps saying why")
        XCTAssertEqual(probes.get(), 0, "a start that reads file-backed records never asks the keyring")
        XCTAssertEqual(opens.get(), 0)
    }

    /// The warning comes once, at the login that chose files; the record keeps the reason.
    func testTheLoginThatChoosesFilesWarnsOnceAndTheRecordSaysWhy() async throws {
        let agent = service(try open(.auto(path: storePath), keyring: Self.noBus))
        XCTAssertEqual(warnings.all, [], "no warning at start")
        _ = try await agent.login(provider: "pat", credentials: .token("pasted-secret"))
        _ = try await agent.login(provider: "pat", credentials: .token("pasted-secret-2"))
        XCTAssertEqual(warnings.all.count, 1, "\(warnings.all)")
        XCTAssertTrue(warnings.all.first?.hasPrefix(Self.noBus) == true)
        let record = try String(contentsOfFile: "\(storePath)/\(key).json", encoding: .utf8)
        XCTAssertTrue(record.contains("\"filesBecause\":\"\(Self.noBus)\""), record)
        XCTAssertEqual(agent.storeStatus, StoreStatus(kind: .file, reason: Self.noBus))
        _ = service(try open(.auto(path: storePath), keyring: Self.noBus))
        XCTAssertEqual(warnings.all.count, 1, "another process reading it says nothing")
    }

    /// A record from a `file` store (or the previous version) has nobody's decision:
    /// an `auto` start without a keyring makes and records it once.
    func testAnUndecidedRecordIsDecidedOnceAtStart() throws {
        var session = Session(accessToken: "file-secret", obtainedAt: Date(timeIntervalSince1970: 1_800_000_000), generation: 3)
        session.account = "default"
        try FileSessionStore(directory: URL(fileURLWithPath: storePath), warn: warnings.sink).save(session, for: key)
        try FileSessionStore(directory: URL(fileURLWithPath: storePath), warn: warnings.sink)
            .saveIndex(AccountIndex(accounts: ["default"], defaultAccount: "default"), for: "pat")
        _ = try open(.auto(path: storePath), keyring: Self.noBus)
        XCTAssertEqual(probes.get(), 1)
        XCTAssertEqual(warnings.all.count, 1, "\(warnings.all)")
        let store = try open(.auto(path: storePath), keyring: Self.noBus)
        XCTAssertEqual(probes.get(), 1, "decided: the next start does not ask")
        XCTAssertEqual(try store.load(key)?.accessToken, "file-secret")
        XCTAssertEqual(warnings.all.count, 1)

        // A start where the keyring answers leaves a decided record in its file: only a write decides again.
        _ = try open(.auto(path: storePath), keyring: nil)
        XCTAssertEqual(secrets.secrets.count, 0)
        XCTAssertEqual(probes.get(), 1)
    }
    /// `keyring` set explicitly takes every token still in a file, `auto`'s decided ones too.
    func testAnExplicitKeyringStoreTakesTheTokensAutoKeptInFiles() async throws {
        _ = try await service(try open(.auto(path: storePath), keyring: Self.noBus)).login(provider: "pat", credentials: .token("pasted-secret"))
        let store = try open(.keyring(path: storePath), keyring: nil)
        let record = try String(contentsOfFile: "\(storePath)/\(key).json", encoding: .utf8)
        XCTAssertTrue(record.contains("secretItem") && !record.contains("pasted-secret"), record)
        XCTAssertEqual(try store.load(key)?.accessToken, "pasted-secret")
    }
    /// A dangling item (a crash between the writes of a save) is deleted by the next
    /// `auto` start that reads a keyring record, as by a `keyring` one.
    func testAnAutoStartWithKeyringRecordsDeletesDanglingItems() async throws {
        _ = try await service(try open(.auto(path: storePath), keyring: nil)).login(provider: "pat", credentials: .token("pasted-secret"))
        try secrets.write("{}", provider: key, item: "9-crashed", label: "x", account: "default")
        XCTAssertEqual(try secrets.items(provider: key).count, 2)
        let store = try open(.auto(path: storePath), keyring: nil)
        XCTAssertEqual(try secrets.items(provider: key).count, 1)
        XCTAssertEqual(try store.load(key)?.accessToken, "pasted-secret")
    }
}
