import Wire

/// Which redirect URIs the authorization endpoint accepts: loopback IP literals
/// over plain http with any port (RFC 8252 §7.3), the way a native app such as
/// the agent receives the code on an ephemeral port.
///
/// The issuer has no client registrations, so this rule is the whole redirect
/// URI check; anything else would make it an open redirector. `localhost` is
/// refused (RFC 8252 §8.3: it may resolve elsewhere), as are user info and fragments.
enum LoopbackRedirectURI {
    /// Why `uri` is not acceptable, or `nil` when it is.
    static func problem(_ uri: String) -> String? {
        let prefix = "http://"
        guard uri.hasPrefix(prefix) else { return "redirect_uri must be an http:// loopback URI" }
        guard !uri.contains("#") else { return "redirect_uri must not have a fragment" }
        let rest = uri.dropFirst(prefix.count)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard !authority.contains("@") else { return "redirect_uri must not contain user info" }
        let host: Substring
        let port: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return "redirect_uri has a malformed host" }
            host = authority[...close]
            let after = authority[authority.index(after: close)...]
            guard after.isEmpty || after.hasPrefix(":") else { return "redirect_uri has a malformed host" }
            port = after.isEmpty ? nil : after.dropFirst()
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            port = authority[authority.index(after: colon)...]
        } else {
            host = authority
            port = nil
        }
        guard host == "127.0.0.1" || host == "[::1]" else {
            return "redirect_uri must use the loopback address 127.0.0.1 or [::1] (RFC 8252 §7.3)"
        }
        if let port {
            guard !port.isEmpty, port.count <= 5, port.allSatisfy(\.isASCII), port.allSatisfy(\.isNumber),
                  let number = Int(port), (1...65535).contains(number) else { return "redirect_uri has an invalid port" }
        }
        return nil
    }

    /// `uri` with `parameters` added to its query.
    static func appending(_ parameters: [(name: String, value: String)], to uri: String) -> String {
        uri + (uri.contains("?") ? "&" : "?") + FormEncoding.queryString(parameters.map { ($0.name, $0.value) })
    }
}
