#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Wire

/// The few HTTP calls every flow makes, over an injected transport, with the
/// agent's timeouts; failures come back classified, never with secrets in them.
struct HTTPCalls: Sendable {
    let transport: HTTPTransport
    let timeout: Double

    enum Failure: Error {
        case transient(String)
    }

    func send(_ method: String, _ url: String, headers: [(String, String)], body: [UInt8]?, timeout: Double? = nil) async throws(Failure) -> HTTPResponse {
        let request = HTTPRequest(method: method, url: url, headers: headers,
                                  body: body, timeout: timeout ?? self.timeout)
        do {
            return try await transport.send(request)
        } catch {
            throw .transient(Self.describe(error, url: url))
        }
    }

    func postForm(_ url: String, _ pairs: [(String, String)], headers: [(String, String)] = [], timeout: Double? = nil) async throws(Failure) -> HTTPResponse {
        try await send("POST", url, headers: [("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json")] + headers,
                       body: FormEncoding.encode(pairs), timeout: timeout)
    }

    func postJSON(_ url: String, _ body: JSONValue, headers: [(String, String)] = [], timeout: Double? = nil) async throws(Failure) -> HTTPResponse {
        try await send("POST", url, headers: [("Content-Type", "application/json"), ("Accept", "application/json")] + headers,
                       body: JSONSerializer.bytes(body), timeout: timeout)
    }

    static func describe(_ error: Error, url: String) -> String {
        let host = Origin(url: url)?.description ?? "the server"
        if let e = error as? HTTPTransportError {
            switch e {
            case .timedOut: return "\(host) did not answer in time"
            case .responseTooLarge: return "\(host) sent an oversized response"
            case .invalidURL: return "the endpoint URL is invalid"
            case .unreachable: return "\(host) could not be reached"
            case .tlsFailed: return "the TLS handshake with \(host) failed or its certificate was not accepted"
            case .headersTooLarge(let limit): return "\(host) sent response headers larger than \(limit) bytes"
            }
        }
        return "\(host) could not be reached"
    }
}
