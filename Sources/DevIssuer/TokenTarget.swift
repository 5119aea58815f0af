import JSON

/// Whom an access token is for: an RFC 8707 `resource` and/or an `audience`
/// (the Auth0-style parameter, RFC 8693's name), as a token request asked.
///
/// The issuer binds the target to the access token (its `aud` claim, and what
/// `/api/token` reports) so a test can see which shaped token a client sent.
struct TokenTarget: Sendable, Equatable {
    var resource: String? = nil
    var audience: String? = nil

    /// Neither: the access token is for the client that asked (`aud` is its id).
    static let unbound = TokenTarget()

    /// The parsed target, or the RFC 8707 §2 `invalid_target` description.
    enum Parsed: Equatable {
        case valid(TokenTarget)
        case invalid(String)
    }

    /// Checks the request's `resource` and `audience` against what this issuer serves.
    /// Descriptions echo a value only when it is made of URI characters, so they stay
    /// within RFC 6749's `error_description` character set.
    static func parse(resource: String?, audience: String?, knownResources: Set<String>, knownAudiences: Set<String>) -> Parsed {
        if let resource {
            guard isAbsoluteURIWithoutFragment(resource) else {
                return .invalid("resource must be an absolute URI without a fragment (RFC 8707)")
            }
            guard knownResources.contains(resource) else { return .invalid("unknown resource \(resource)") }
        }
        if let audience {
            guard knownAudiences.contains(audience) else {
                return .invalid(isURICharacters(audience) ? "unknown audience \(audience)" : "unknown audience")
            }
        }
        return .valid(TokenTarget(resource: resource, audience: audience))
    }

    /// The access token's `aud` claim: the target when there is one (both, as an array,
    /// when a request named both), else `nil` and the caller uses the client id.
    var audienceClaim: JSONValue? {
        switch (resource, audience) {
        case (nil, nil): return nil
        case (let resource?, nil): return .string(resource)
        case (nil, let audience?): return .string(audience)
        case (let resource?, let audience?): return [.string(resource), .string(audience)]
        }
    }

    /// `scheme:rest`, no fragment, only URI characters (RFC 3986 §3).
    static func isAbsoluteURIWithoutFragment(_ text: String) -> Bool {
        guard isURICharacters(text), !text.contains("#"), let colon = text.firstIndex(of: ":"),
              colon != text.startIndex, text.index(after: colon) != text.endIndex else { return false }
        let scheme = text[..<colon]
        return scheme.first!.isLetter && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }
    }

    /// Printable ASCII without space, `"`, `<`, `>`, `\`, `^`, backquote, `{`, `|`, `}`.
    private static func isURICharacters(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            (0x21...0x7E).contains(scalar.value) && !"\"<>\\^`{|}".unicodeScalars.contains(scalar)
        }
    }
}

/// The names under which the issuer counts the tokens it issued per subject and
/// shape, so a test can assert "one refresh per expiry per token":
/// `GRANT:SUBJECT` and `GRANT:SUBJECT:SHAPE`, where SHAPE is `default` for a request
/// without `scope`, `resource` and `audience`, else its parts `audience=…`,
/// `resource=…`, `scope=…` (scope tokens sorted, joined by `,`) joined by `;`.
enum GrantCounter {
    static func keys(grant: String, subject: String, requestedScope: String?, target: TokenTarget) -> [String] {
        ["\(grant):\(subject)", "\(grant):\(subject):\(shape(requestedScope: requestedScope, target: target))"]
    }

    static func shape(requestedScope: String?, target: TokenTarget) -> String {
        var parts: [String] = []
        if let audience = target.audience { parts.append("audience=\(audience)") }
        if let resource = target.resource { parts.append("resource=\(resource)") }
        if let requestedScope { parts.append("scope=" + IssuerState.scopes(requestedScope).sorted().joined(separator: ",")) }
        return parts.isEmpty ? "default" : parts.joined(separator: ";")
    }
}
