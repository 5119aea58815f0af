import JSON

/// What a successful token request returned. Kept with the refresh token it
/// came from, so a replay within the reuse grace period gets the very same tokens.
struct TokenGrant: Sendable {
    let accessToken: String
    let expiresIn: Int
    let refreshToken: String?
    let scope: String?
    let idToken: String?
    /// Bound to the key of a DPoP proof (RFC 9449): `token_type` is then `DPoP`.
    var dpopBound = false

    /// The RFC 6749 §5.1 response body.
    var json: JSONValue {
        var object: JSONObject = [
            "access_token": .string(accessToken),
            "token_type": dpopBound ? "DPoP" : "Bearer",
            "expires_in": .int(Int64(expiresIn)),
        ]
        if let refreshToken { object["refresh_token"] = .string(refreshToken) }
        if let scope { object["scope"] = .string(scope) }
        if let idToken { object["id_token"] = .string(idToken) }
        return .object(object)
    }
}
