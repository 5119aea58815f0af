import Wire

/// Whether an exchange may go through the proxy the environment names
/// (`http_proxy`, `https_proxy`, `ALL_PROXY`; libcurl reads them on its own).
///
/// A proxy reads a plain-http request in full, so one carrying a credential over
/// http would hand it to the proxy in cleartext. Such a request goes **direct**
/// rather than failing: an http endpoint with credentials is a loopback one in
/// practice (the configuration allows no other), where a proxy has no business,
/// and a request that would reach the network in cleartext anyway should not reach
/// one more party. https goes through a proxy only as a CONNECT tunnel, which
/// shows the proxy the host and port and nothing else.
enum ProxyRule {
    /// Form fields that hold a secret: a password grant's password, a client's secret or
    /// assertion, grants (codes, refresh tokens) and tokens being exchanged or revoked.
    static let credentialFields: Set<String> = [
        "password", "client_secret", "client_assertion", "assertion", "refresh_token", "code", "code_verifier",
        "device_code", "token", "subject_token", "actor_token",
    ]

    static func mayUseProxy(_ request: HTTPRequest, _ origin: Origin) -> Bool {
        if origin.isLoopback { return false }  // never leaves the machine: a proxy could only be a detour
        if origin.scheme == "https" { return true }
        return !carriesCredentials(request)
    }

    /// Every auth-server call (they carry client credentials, grants or tokens), a request with an
    /// `Authorization` or `Cookie` header, or a form body with one of `credentialFields`.
    static func carriesCredentials(_ request: HTTPRequest) -> Bool {
        if request.lane == .authServer { return true }
        if request.header("authorization") != nil || request.header("cookie") != nil { return true }
        guard let body = request.body, let fields = FormEncoding.decode(body) else { return false }
        return fields.contains { credentialFields.contains($0.name) }
    }
}
