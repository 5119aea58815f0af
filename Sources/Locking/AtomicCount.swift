#if os(Linux)
import Synchronization
#endif

/// A count that a hot path reads without taking a lock: stored (releasing) by whoever changes
/// what it counts, under that thing's own lock, and read (acquiring) before deciding whether the
/// lock is worth taking at all — `sign` asks whether anything was learned, or selected, on every call.
/// An atomic on Linux; elsewhere (where `Atomic` needs macOS 15) a lock, as correct and no faster.
#if os(Linux)
public final class AtomicCount: Sendable {
    private let value = Atomic<Int>(0)

    public init() {}

    public func load() -> Int { value.load(ordering: .acquiring) }
    public func store(_ count: Int) { value.store(count, ordering: .releasing) }
}
#else
public final class AtomicCount: Sendable {
    private let value = Locked(0)

    public init() {}

    public func load() -> Int { value.current }
    public func store(_ count: Int) { value.withLock { $0 = count } }
}
#endif
