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

    /// A token request with a proof of `key`. A `400 use_dpop_nonce` is answered
    /// once more with the nonce it brought; a refused proof is `transient` naming
    /// the refusal — the grant (a refresh token, a device code) was not spent, so
    /// the session must not end over it.
    func postProven(_ endpoint: String, _ pairs: [(String, String)], key: DPoPKey) async -> TokenEndpointResult {
        var askedForNonce = false
        while true {
            let response: HTTPResponse
            do {
                let proof = try key.proof(method: "POST", url: endpoint, at: clock.now(), nonce: nonces.nonce(for: endpoint))
                let auth = clientAuth(pairs)
                response = try await http.postForm(endpoint, auth.pairs, headers: auth.headers + [("DPoP", proof)])
            } catch let error as P256Key.Unavailable {
                return .transient(error.description)
            } catch let error as HTTPCalls.Failure {
                switch error { case .transient(let why): return .transient(why) }
            } catch {
                return .transient("\(error)")
            }
            nonces.update(from: response, for: endpoint)
            if !askedForNonce, case .retryWithNonce = ServerChallenge.read(response, to: .provenGrant) {
                askedForNonce = true
                continue
            }
            switch TokenEndpointResult.classify(response) {
            case .success(var token):
                token.dpopKey = key
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
    }

    /// The userinfo request for a freshly issued token: with a proof (and `ath`) when the token is DPoP-bound.
    func userinfo(_ endpoint: String, accessToken: String, tokenType: String, key: DPoPKey?) async throws -> HTTPResponse {
        let authorization = Credential.authorization(tokenType: tokenType, accessToken: accessToken)
        let accept = [("Accept", "application/json")]
        guard tokenType == "DPoP", let key else {
            return try await http.send("GET", endpoint, headers: Credential.headers(authorization: authorization, proof: nil) + accept, body: nil)
        }
        return try await DPoPExchange.send(url: endpoint, nonces: nonces, authorize: { [clock, nonces] in
            let proof = try Credential.proof(key, accessToken: accessToken, method: "GET", url: endpoint, clock: clock, nonces: nonces)
            return Credential.headers(authorization: authorization, proof: proof)
        }) { headers in
            try await http.send("GET", endpoint, headers: headers + accept, body: nil)
        }
    }
}

/// A resource request with a proof (RFC 9449 §7), shared by `fetch` and userinfo.
enum DPoPExchange {
    /// Sends with the headers `authorize` makes (a proof for this request, with the nonce its
    /// origin gave last); when the answer asks for a nonce (`ServerChallenge.retryWithNonce`), once
    /// more with it. Every answer's `DPoP-Nonce` is remembered for its origin.
    static func send(url: String, nonces: DPoPNonces, authorize: () throws -> [(String, String)],
                     _ exchange: ([(String, String)]) async throws -> HTTPResponse) async throws -> HTTPResponse {
        var response = try await exchange(try authorize())
        nonces.update(from: response, for: url)
        if case .retryWithNonce = ServerChallenge.read(response, to: .provenToken) {
            response = try await exchange(try authorize())
            nonces.update(from: response, for: url)
        }
        return response
    }
}
