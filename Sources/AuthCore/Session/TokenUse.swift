/// What a token handed out by `token` will be used for — the one rule on what a DPoP-bound
/// token may leave the agent for, whichever door asks (in-process, the socket, the helpers).
public enum TokenUse: Sendable, Equatable {
    /// A host that reads `tokenType` and knows what it holds.
    case any
    /// Sent as it is, with no proof (`auth-agent token`, git's and kubectl's helpers): refused
    /// for a DPoP provider, and for a token a server bound anyway, whose value alone is useless
    /// to the caller and would only leak a bound token into logs and environments.
    case bearer

    /// Refuses, before anything is obtained, a provider whose tokens are bound by configuration.
    func check(_ provider: ProviderConfig) throws(AuthError) {
        if self == .bearer, provider.dpop { throw AuthError.boundToken(provider) }
    }

    /// Refuses a token the server bound although the provider did not ask for it.
    func check(_ provider: ProviderConfig, _ credential: Credential) throws(AuthError) {
        if self == .bearer, credential.tokenType == "DPoP" { throw AuthError.boundToken(provider) }
    }
}
