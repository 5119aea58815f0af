import Locking

/// The nonces servers gave for DPoP proofs (RFC 9449 §8, §9), one per origin:
/// an authorization server and a resource on one origin share it (Glewlwyd
/// keeps one per client for `/token` and `/userinfo`, and sends a new one only
/// when it changes), so the latest `DPoP-Nonce` from any response of an origin
/// goes into the next proof for it. `Exchange` keeps each one a proven request is answered with.
final class DPoPNonces: Sendable {
    private let nonces = Locked<[Origin: String]>([:])

    func nonce(for url: String) -> String? {
        // Most servers never send one: then no URL is parsed on `sign`'s path.
        guard !nonces.withLock({ $0.isEmpty }), let origin = Origin(url: url) else { return nil }
        return nonces.withLock { $0[origin] }
    }

    func keep(_ nonce: String, for url: String) {
        guard !nonce.isEmpty, let origin = Origin(url: url) else { return }
        nonces.withLock { $0[origin] = nonce }
    }
}

extension AuthService {
    /// A `DPoP-Nonce` from an answer the agent did not send itself (the `mcp` bridge streams its
    /// exchanges): kept for the next proofs to that origin, which `sign` then carries (RFC 9449 §9).
    public func keep(dpopNonce: String, for url: String) { nonces.keep(dpopNonce, for: url) }
}
