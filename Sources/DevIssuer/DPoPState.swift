import Locking
import Wire

/// What the issuer remembers about DPoP: the `jti`s seen within the `iat`
/// window (a replayed proof is refused), the nonce it currently wants when
/// nonces are mandatory (as Glewlwyd's `oauth-dpop-nonce-mandatory`), and the
/// DPoP faults tests and the demo inject.
final class DPoPState: Sendable {
    private struct Memory {
        var seen: [String: Int64] = [:]
        var nonceRequired = false
        var nonce = SecureRandom.token(bytes: 16)
        /// The next N token requests with a proof are answered as if there were none: a `Bearer` token.
        var bearerAnswers = 0
        /// The next N proofs are refused (`invalid_dpop_proof`) whatever they say.
        var refusals = 0
    }

    private let memory = Locked(Memory())

    /// The proof's outcome after replay, nonce and fault checks (the proof itself already verified).
    enum Admission: Equatable {
        case admitted
        case refused(String)
        /// Mandatory nonces: the proof had none or a stale one; answer with `nonce`.
        case needsNonce(String)
    }

    func admit(_ proof: DPoPVerifier.Proof) -> Admission {
        memory.withLock { m in
            if m.refusals > 0 {
                m.refusals -= 1
                return .refused("refused by an injected fault")
            }
            if m.nonceRequired, proof.nonce != m.nonce { return .needsNonce(m.nonce) }
            // Forget what has left the window: a proof that old is refused for its iat anyway.
            if m.seen.count > 10_000 { m.seen = m.seen.filter { $0.value >= proof.iat - DPoPVerifier.maxAge - DPoPVerifier.maxSkew } }
            guard m.seen.updateValue(proof.iat, forKey: proof.jti) == nil else { return .refused("jti was already used") }
            return .admitted
        }
    }

    /// The nonce to announce in `DPoP-Nonce`, when nonces are mandatory.
    var currentNonce: String? { memory.withLock { $0.nonceRequired ? $0.nonce : nil } }

    /// Takes one "answer Bearer" fault, if any is pending.
    func takeBearerAnswer() -> Bool {
        memory.withLock { m in
            guard m.bearerAnswers > 0 else { return false }
            m.bearerAnswers -= 1
            return true
        }
    }

    func setNonceRequired(_ required: Bool) {
        memory.withLock {
            $0.nonceRequired = required
            $0.nonce = SecureRandom.token(bytes: 16)
        }
    }

    /// A new nonce: clients holding the old one get `use_dpop_nonce` once more.
    func rotateNonce() { memory.withLock { $0.nonce = SecureRandom.token(bytes: 16) } }

    func answerBearerNext(_ count: Int) { memory.withLock { $0.bearerAnswers = max(0, count) } }
    func refuseProofsNext(_ count: Int) { memory.withLock { $0.refusals = max(0, count) } }

    func reset() {
        memory.withLock { m in
            m.nonceRequired = false
            m.bearerAnswers = 0
            m.refusals = 0
        }
    }
}
