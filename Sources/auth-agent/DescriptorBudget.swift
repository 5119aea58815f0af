#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How many connections each socket of `serve --socket` may serve at once: the options' caps,
/// within what the descriptor limit leaves once a reserve is kept for the rest of the agent.
/// Why: every connection is a descriptor, and an agent out of descriptors can neither open its
/// store nor reach an auth server — nor accept its own user on the main socket — and libdispatch
/// may die of it (issue 29 item 5).
enum DescriptorBudget {
    /// Descriptors kept for everything but connections: standard streams, listeners and locks,
    /// the store's files, the transfers of two services' fetch lanes (64 each) and auth-server
    /// calls, browser listeners, Dispatch's own.
    static let reserve = 160

    /// Raises the soft `RLIMIT_NOFILE` to the hard one (on macOS at most `OPEN_MAX`, which the
    /// kernel enforces whatever the hard limit says) and returns the soft limit in force.
    static func raiseLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        var raised = limit
        raised.rlim_cur = limit.rlim_max
        #if canImport(Darwin)
        raised.rlim_cur = min(limit.rlim_max, rlim_t(OPEN_MAX))
        #endif
        if raised.rlim_cur > limit.rlim_cur, setrlimit(resource, &raised) == 0 { limit = raised }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }

    /// The caps in force under `limit` descriptors: the forward socket (when there is one) gets
    /// at most half of what is left after the reserve, so it can never starve the main socket.
    static func caps(main: Int, forward: Int?, limit: Int) -> (main: Int, forward: Int) {
        let room = max(2, limit - reserve)
        let forwardCap = forward.map { min($0, max(1, room / 2)) } ?? 0
        return (min(main, max(1, room - forwardCap)), forwardCap)
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
