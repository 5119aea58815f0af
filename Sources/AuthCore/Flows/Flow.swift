/// How the agent obtains credentials for a provider; the raw value is the
/// configuration's `flow` string.
///
/// - `session`: POST a templated JSON body to a login endpoint and pick the
///   token out of the response with a JSON pointer (non-OAuth web APIs).
/// - `password`: OAuth 2.0 resource owner password grant.
/// - `clientCredentials`: OAuth 2.0 client credentials grant (no user).
/// - `token`: a token the user pastes in; nothing is fetched.
/// - `deviceCode`: OAuth 2.0 device authorization grant (RFC 8628).
/// - `authorizationCode`: OAuth 2.0 authorization code grant with PKCE and a
///   loopback redirect (RFC 8252).
/// - `tokenExchange`: RFC 8693 exchange of another provider's token (`from`); no login of its own.
/// - `idJag`: Enterprise-Managed Authorization — an ID-JAG for another provider's ID token, then the
///   jwt-bearer grant at the API's authorization server; no login of its own.
public enum Flow: String, Sendable, CaseIterable {
    case session
    case password
    case clientCredentials
    case token
    case deviceCode
    case authorizationCode
    case tokenExchange
    case idJag
}
