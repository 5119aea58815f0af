import ES256
import JSON

/// DPoP at the authorization server (RFC 9449 §5, §8): every token request of a
/// `dpop` provider carries a proof, and the userinfo call that names the user
/// after a login proves the key as any resource request does.
extension OAuthClient {
    /// The key a grant proves: a new one for a login (a new login never reuses a
    /// key), the session's for a renewal (the server refuses a refresh proven by
    /// another key), none when the provider does not use DPoP or the session
    /// predates it. A failure means no ES256 implementation could be loaded.
    func grantKey(renewing session: Session?) -> Result<DPoPKey?, P256Key.Unavailable> {
        if let session { return .success(session.dpopKey) }
        guard config.dpop else { return .success(nil) }
        do {
            return .success(try DPoPKey.generate())
        } catch {
            return .failure(error)
        }
    }

    /// A token request with a proof of `key`, through the one `Exchange`: a `400 use_dpop_nonce` is
    /// answered once more with the nonce it brought; a refused proof is `transient` naming the
    /// refusal — the grant (a refresh token, a device code) was not spent, so the session must not
    /// end over it.
    func postProven(_ endpoint: String, _ pairs: [(String, String)], key: DPoPKey) async -> TokenEndpointResult {
        var state = ExchangeState()
        let exchange = Exchange<DPoPKey, HTTPResponse>(
            carries: { _ in .provenGrant },
            sign: { [clock, nonces] key in
                guard let key else { return [] }
                return [("DPoP", try key.proof(method: "POST", url: endpoint, at: clock.now(), nonce: nonces.nonce(for: endpoint)))]
            },
            send: { [self] proof in
                // The client's authentication anew for each attempt (a signed assertion is used once).
                let auth = try clientAuth(pairs, endpoint: endpoint)
                return try await http.postForm(endpoint, auth.pairs, headers: auth.headers + proof)
            },
            head: { $0 },
            keepNonce: { [nonces] nonce in nonces.keep(nonce, for: endpoint) })
        let response: HTTPResponse
        do {
            response = try await exchange.run(key, state: &state).answer
        } catch let error as P256Key.Unavailable {
            return .transient(error.description)
        } catch let error as HTTPCalls.Failure {
            switch error { case .transient(let why): return .transient(why) }
        } catch {
            return .transient("\(error)")
        }
        switch config.explained(TokenEndpointResult.classify(response)) {
        case .success(var token):
            token.dpopKey = key
            if token.tokenType != "DPoP", let profile = config.profiles.first(where: \.senderConstrained) {
                return .malformed("\(profile.specification) forbids plain Bearer tokens (sender-constrained tokens are required), and the token endpoint answered token_type \(ServerRefusal(error: token.tokenType, description: nil).error) to a DPoP-proven request")
            }
            if token.tokenType != "DPoP" {
                tokenTypeWarning("\(config.id): the token endpoint answered a DPoP-proven request with token_type \(token.tokenType); its tokens are used as such")
            }
            return .success(token)
        case .rejected(let error, let description) where ServerChallenge.proofRefusals.contains(error):
            return .transient("the token endpoint refused the DPoP proof (\(ServerRefusal(error: error, description: description).line))")
        case let other:
            return other
        }
    }

    /// The userinfo request for a freshly issued token: with a proof (and `ath`) when the token is DPoP-bound.
    func userinfo(_ endpoint: String, accessToken: String, tokenType: String, key: DPoPKey?) async throws -> HTTPResponse {
        let authorization = Credential.authorization(tokenType: tokenType, accessToken: accessToken)
        let accept = [("Accept", "application/json")]
        guard tokenType == "DPoP", let key else {
            return try await http.send("GET", endpoint, headers: Credential.headers(authorization: authorization, proof: nil) + accept, body: nil)
        }
        // Through the one `Exchange`: one nonce retry; a 401 (the token just issued) comes back as is.
        var state = ExchangeState()
        return try await Exchange<DPoPKey, HTTPResponse>(
            carries: { _ in .provenToken },
            sign: { [clock, nonces] key in
                let proof = try key.map { try Credential.proof($0, accessToken: accessToken, method: "GET", url: endpoint, clock: clock, nonces: nonces) }
                return Credential.headers(authorization: authorization, proof: proof)
            },
            send: { [http] headers in try await http.send("GET", endpoint, headers: headers + accept, body: nil) },
            head: { $0 },
            keepNonce: { [nonces] nonce in nonces.keep(nonce, for: endpoint) }
        ).run(key, state: &state).answer
    }
}
