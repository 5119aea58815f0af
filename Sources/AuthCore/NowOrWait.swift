/// "Try now, else wait", written once: the answer from memory when nothing must be
/// obtained first, else the operation that waits for it — made from one set of
/// arguments (`AuthService.signNowOrWait`, `tokenNowOrWait`), so the two can never ask
/// different questions. Callers only say how they wait: `sign` answers later on the
/// RPC engine, `header` and `token` on the command line block until their timeout.
public enum NowOrWait<T: Sendable>: Sendable {
    case now(T)
    case wait(@Sendable () async throws(AuthError) -> T)
}
