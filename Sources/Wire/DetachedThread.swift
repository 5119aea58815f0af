#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain detached POSIX thread, for the loops that block in `poll` or
/// `recv` — the dev issuer's accept loop and connections, the agent's
/// redirect listener — which must not occupy Dispatch's or Swift
/// concurrency's shared threads. Replaces Foundation's `Thread`, the only
/// reason those files needed Foundation.
public enum DetachedThread {
    /// Runs `body` on a new thread; false (and `body` never runs) when the
    /// system refuses one, so the caller can release what it meant to hand over.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        #if canImport(Glibc)
        var thread = pthread_t()
        #else
        var thread: pthread_t?
        #endif
        let result = pthread_create(&thread, &attributes, { context in
            #if canImport(Glibc)
            guard let context else { return nil }
            #endif
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().run()
            return nil
        }, context)
        if result != 0 {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        return true
    }

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }
}
