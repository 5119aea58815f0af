import Wire

/// Why a request was refused before it reached a route; the server answers
/// with `status` and closes the connection, since framing can no longer be trusted.
struct HTTPRejection: Error, Sendable, Equatable {
    var status: Int
    var reason: String

    /// The `error` member of the JSON body.
    var code: String {
        switch status {
        case 400: return "bad_request"
        case 413: return "request_too_large"
        default: return "unsupported"
        }
    }
}

/// How this server frames a body after the head `HTTPRequestHead` parsed (in Wire, shared with
/// the agent's redirect listener, which reads no body): `Content-Length` only, strictly.
extension HTTPRequestHead {
    /// The declared body length (0 without `Content-Length`). Transfer codings and conflicting
    /// or malformed lengths are refused rather than guessed at: a test probing a client's request
    /// smuggling must see the refusal.
    func contentLength(max maxBodyLength: Int) -> Result<Int, HTTPRejection> {
        if !headers.values("transfer-encoding").isEmpty {
            return .failure(HTTPRejection(status: 501, reason: "transfer codings are not supported; send Content-Length"))
        }
        let lengths = Set(headers.values("content-length").flatMap { $0.split(separator: ",") }.map(HTTPText.trimmingWhitespace))
        if lengths.count > 1 { return .failure(HTTPRejection(status: 400, reason: "conflicting Content-Length")) }
        guard let declared = lengths.first else { return .success(0) }
        guard !declared.isEmpty, declared.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return .failure(HTTPRejection(status: 400, reason: "malformed Content-Length"))
        }
        guard let length = Int(declared), length <= maxBodyLength else {
            return .failure(HTTPRejection(status: 413, reason: "request body too large"))
        }
        return .success(length)
    }
}
