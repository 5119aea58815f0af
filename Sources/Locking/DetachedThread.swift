#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain detached POSIX thread, for the loops that block in `poll`, `recv`
/// or `sigwait` — the dev issuer's accept loop and connections, the agent's
/// redirect listener, its signal thread — which must not occupy Dispatch's or
/// Swift concurrency's shared threads. Replaces Foundation's `Thread`.
///
/// The thread starts with the asynchronous signals blocked, as Dispatch's do,
/// so that a termination signal goes to the one thread that waits for it
/// (`StdioServer`'s) and never to a thread that would take the default action.
public enum DetachedThread {
    /// Runs `body` on a new thread; false (and `body` never runs) when the
    /// system refuses one, so the caller can release what it meant to hand over.
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        // A new thread inherits the creating thread's mask: block, create, restore.
        var asynchronous = sigset_t()
        sigfillset(&asynchronous)
        for synchronous in [SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV] { sigdelset(&asynchronous, synchronous) }
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &asynchronous, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
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
