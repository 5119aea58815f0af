#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutual-exclusion lock over a heap-allocated pthread mutex.
///
/// The one lock every module uses, instead of `NSLock`: `NSLock` lives in
/// Foundation proper, and a single use of it makes the loader map all of
/// Foundation (and ICU) at start-up. `Synchronization.Mutex` would do, but
/// needs macOS 15. The mutex is heap-allocated because a pthread mutex must
/// not move, and a Swift stored property may.
public final class Lock: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    @inline(__always) public func lock() { pthread_mutex_lock(mutex) }
    @inline(__always) public func unlock() { pthread_mutex_unlock(mutex) }
    /// Takes the lock if it is free; false, without waiting, when another thread holds it.
    @inline(__always) public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

    /// Runs `body` holding the lock; keep it short and never block inside.
    @inline(__always)
    public func withLock<R>(_ body: () throws -> R) rethrows -> R {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A value guarded by a `Lock`: state shared between plain threads (the
/// reader thread, the dev issuer's connection threads) and tasks, where an
/// actor would make synchronous handlers hop executors mid-request.
public final class Locked<Value>: @unchecked Sendable {
    private let lock = Lock()
    private var value: Value

    public init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access; keep it short and never block inside.
    @discardableResult
    public func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    public var current: Value { withLock { $0 } }
}
