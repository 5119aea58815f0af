/// The headers that authorize one request with a credential.
extension AuthService {
    /// A `sign` answer; a DPoP-bound token gets a fresh proof for this method and URL (never cached).
    func signature(_ p: ProviderAccounts, _ c: SessionCoordinator, _ shape: TokenShape, _ credential: Credential,
                           method: String, url: String) throws(AuthError) -> Signature {
        var proof: String?
        if let key = credential.dpopKey {
            do {
                proof = try key.proof(method: method, url: url, at: clock.now(), accessToken: credential.accessToken, nonce: nonces.nonce(for: url))
            } catch {
                throw AuthError.unavailable(c.config, error.description)
            }
        }
        return Signature(provider: p.id, account: c.account, shape: shape, credential: credential, proof: proof)
    }
}
