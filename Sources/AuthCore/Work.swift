import JSON

extension AuthService {
    /// A request that has to wait (for the network, a lock, or an earlier login
    /// of its provider), already placed in its provider's order.
    ///
    /// The place is held until `answered` is called, not merely until `run`
    /// returns: the caller calls it once the answer is on its way to the host,
    /// so the host always sees this answer before anything a later request of
    /// the same provider causes (a login's answer before the logout's
    /// `userLoggedOut`). It must be called exactly once, whatever `run` did.
    public struct Work: Sendable {
        public let run: @Sendable () async throws -> JSONValue
        public let answered: @Sendable () -> Void
    }
}
