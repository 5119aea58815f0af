#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking

/// A session store that forgets everything when the process exits.
///
/// For `"store": {"kind": "memory"}` (nothing touches the disk, e.g. on shared
/// machines) and for tests of code built on `SessionStore`. Locks are per
/// provider and in-process only, which is all a memory store can need.
public final class MemorySessionStore: SessionStore {
    private let sessions = Locked<[String: Session]>([:])
    private let indexes = Locked<[String: AccountIndex]>([:])
    private let documents = Locked<[String: (bytes: [UInt8], version: Int)]>([:])
    private let locks = InProcessLocks()

    public init() {}

    public func load(_ provider: String) throws -> Session? {
        sessions.withLock { $0[provider] }
    }

    public func save(_ session: Session, for provider: String) throws {
        sessions.withLock { $0[provider] = session }
    }

    public func remove(_ provider: String) throws {
        sessions.withLock { $0[provider] = nil }
    }

    public func tryLock(_ provider: String) throws -> StoreLock? {
        guard locks.tryAcquire(provider) else { return nil }
        return StoreLock { [locks] in locks.release(provider) }
    }

    public func loadIndex(_ provider: String) throws -> AccountIndex? { indexes.withLock { $0[provider] } }

    public func saveIndex(_ index: AccountIndex, for provider: String) throws {
        indexes.withLock { $0[provider] = index.accounts.isEmpty ? nil : index }
    }

    public func indexStamp(_ provider: String) -> String? {
        indexes.withLock { $0[provider].map { "\($0.accounts.joined(separator: "\u{0}"))|\($0.defaultAccount ?? "")" } }
    }

    public func modificationStamp(_ provider: String) -> String? {
        sessions.withLock { $0[provider].map { "\($0.generation)-\($0.accessToken.hashValue)" } }
    }

    public func loadDocument(_ key: String) throws -> [UInt8]? { documents.withLock { $0[key]?.bytes } }

    public func saveDocument(_ bytes: [UInt8]?, key: String) throws {
        documents.withLock { d in
            let version = (d[key]?.version ?? 0) + 1
            d[key] = bytes.map { ($0, version) }
        }
    }

    public func documentStamp(_ key: String) -> String? { documents.withLock { $0[key].map { "\($0.version)" } } }
}
