import JSON
import Locking

/// The nonces servers gave for DPoP proofs (RFC 9449 §8, §9), one per origin:
/// an authorization server and a resource on one origin share it (Glewlwyd
/// keeps one per client for `/token` and `/userinfo`, and sends a new one only
/// when it changes), so the latest `DPoP-Nonce` from any response of an origin
/// goes into the next proof for it.
final class DPoPNonces: Sendable {
    private let nonces = Locked<[Origin: String]>([:])

    func nonce(for url: String) -> String? {
        // Most servers never send one: then no URL is parsed on `sign`'s path.
        guard !nonces.withLock({ $0.isEmpty }), let origin = Origin(url: url) else { return nil }
        return nonces.withLock { $0[origin] }
    }

    /// Remembers the response's `DPoP-Nonce`, if it has one.
    func update(from response: HTTPResponse, for url: String) {
        if let nonce = response.headers["dpop-nonce"] { keep(nonce, for: url) }
    }

    func keep(_ nonce: String, for url: String) {
        guard !nonce.isEmpty, let origin = Origin(url: url) else { return }
        nonces.withLock { $0[origin] = nonce }
    }

    /// Whether the response asks for a proof with a (new) nonce: `400 use_dpop_nonce`
    /// at a token endpoint (§8), `401` with `WWW-Authenticate: DPoP error="use_dpop_nonce"` at a resource (§9).
    static func asksForNonce(_ response: HTTPResponse) -> Bool {
        guard response.headers["dpop-nonce"] != nil else { return false }
        return DPoPErrors.code(of: response) == "use_dpop_nonce"
    }
}

/// The DPoP error codes a response carries, from either place RFC 9449 puts them.
enum DPoPErrors {
    /// A server's refusal of a proof rather than of the grant or the token.
    static let refusals: Set<String> = ["invalid_dpop_proof", "use_dpop_nonce"]

    /// `error` of a token endpoint's JSON body (400), or of a `WWW-Authenticate: DPoP` challenge (401).
    static func code(of response: HTTPResponse) -> String? {
        if response.status == 401, let challenge = response.headers["www-authenticate"] {
            // `DPoP error="use_dpop_nonce", error_description="…"`: the quoted value after the first `error=`.
            let parts = challenge.split(separator: "\"", omittingEmptySubsequences: false)
            for (i, part) in parts.enumerated() where i + 1 < parts.count && i % 2 == 0 && part.hasSuffix("error=")
                && (part.count == 6 || [" ", ",", "\t"].contains(part.dropLast(6).last)) {
                return String(parts[i + 1])
            }
        }
        if response.status == 400 || response.status == 401 {
            return (try? JSONParser.parse(response.body))?.objectValue?["error"]?.stringValue
        }
        return nil
    }
}

extension AuthService {
    /// A `DPoP-Nonce` from an answer the agent did not send itself (the `mcp` bridge streams its
    /// exchanges): kept for the next proofs to that origin, which `sign` then carries (RFC 9449 §9).
    public func keep(dpopNonce: String, for url: String) { nonces.keep(dpopNonce, for: url) }
}
