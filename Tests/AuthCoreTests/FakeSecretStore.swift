@testable import AuthCore
import Foundation
import TestSupport

/// An in-memory keyring for tests: items by provider and name, a `locked`
/// switch that makes every call fail as a locked Secret Service does, and a
/// `failWrites` switch.
final class FakeSecretStore: SecretStore, @unchecked Sendable {
    private let items_ = TestBox<[String: String]>([:])
    let locked = TestBox(false)
    let failWrites = TestBox(false)

    private func key(_ provider: String, _ item: String) -> String { "\(provider)\u{0}\(item)" }

    private func checkUnlocked() throws {
        if locked.get() { throw SessionStoreError.unavailable("the keyring is locked") }
    }

    func write(_ secret: String, provider: String, item: String, label: String, account: String?) throws {
        try checkUnlocked()
        if failWrites.get() { throw SessionStoreError.unavailable("writing failed") }
        items_.update { $0[key(provider, item)] = secret }
    }

    func read(provider: String, item: String) throws -> String? {
        try checkUnlocked()
        return items_.get()[key(provider, item)]
    }

    func delete(provider: String, item: String) throws {
        try checkUnlocked()
        items_.update { $0[key(provider, item)] = nil }
    }

    func items(provider: String) throws -> [String] {
        try checkUnlocked()
        return items_.get().keys.filter { $0.hasPrefix("\(provider)\u{0}") }.map { String($0.split(separator: "\u{0}")[1]) }.sorted()
    }

    /// Every secret held, for "the token is here and nowhere else" checks.
    var secrets: [String] { Array(items_.get().values) }
}
