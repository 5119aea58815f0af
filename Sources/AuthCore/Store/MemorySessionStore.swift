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

    public func modificationStamp(_ provider: String) -> String? {
        sessions.withLock { $0[provider].map { "\($0.generation)-\($0.accessToken.hashValue)" } }
    }
}
