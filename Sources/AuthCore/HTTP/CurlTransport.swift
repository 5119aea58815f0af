#if os(Linux)
import CurlShim
import Dispatch
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Wire

/// The `HTTPTransport` on Linux: libcurl through a small C bridge that loads
/// it on the first request, so an agent that never touches the network never
/// pays for mapping libcurl and its thirty-odd libraries at start-up
/// (FoundationNetworking would link them into every start).
///
/// The same rules as `URLSessionTransport`: no redirects, no cookies (curl's
/// cookie engine stays off), http and https only, a deadline for the whole
/// exchange, a response size cap, a fresh connection per request, and a URL
/// that `Origin` and Foundation's parser read alike.
public final class CurlTransport: HTTPTransport {
    public let maxResponseBytes: Int

    public init(maxResponseBytes: Int = 1 << 20) {
        self.maxResponseBytes = maxResponseBytes
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let origin = Origin(url: request.url), let url = URL(string: request.url),
              HTTPRequestChecks.foundationAgrees(url, origin),
              request.headers.allSatisfy({ HTTPRequestChecks.isHeaderSafe($0.0) && HTTPRequestChecks.isHeaderSafe($0.1) }),
              !request.method.isEmpty, request.method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
        else { throw HTTPTransportError.invalidURL }
        guard request.timeout > 0 else { throw HTTPTransportError.timedOut }
        let flag = CancelFlag()
        let maxResponseBytes = request.maxResponseBytes ?? self.maxResponseBytes
        let timeoutMilliseconds = Int(min(request.timeout, 86_400) * 1000)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                // curl blocks: run it on a GCD thread, never on the cooperative pool.
                DispatchQueue.global().async {
                    continuation.resume(with: Self.perform(request, host: origin.host, timeoutMilliseconds: timeoutMilliseconds,
                                                           maxResponseBytes: maxResponseBytes, flag: flag))
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }

    private static func perform(_ request: HTTPRequest, host: String, timeoutMilliseconds: Int, maxResponseBytes: Int,
                                flag: CancelFlag) -> Result<HTTPResponse, Error> {
        // One connection per request: see URLSessionTransport on dropped keep-alive connections.
        let headerLines = request.headers.map { "\($0.0): \($0.1)" } + ["Connection: close"]
        var cStrings = headerLines.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var response = acurl_response()
        defer { acurl_response_free(&response) }
        let body = request.body ?? []
        let code = cStrings.withUnsafeMutableBufferPointer { headers -> Int32 in
            headers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rebound in
                body.withUnsafeBufferPointer { bodyBytes in
                    acurl_perform(request.method, request.url, rebound.baseAddress, rebound.count,
                                  bodyBytes.baseAddress, bodyBytes.count, request.body == nil ? 0 : 1,
                                  timeoutMilliseconds, maxResponseBytes, flag.pointer, &response)
                }
            }
        }
        switch Int(code) {
        case Int(ACURL_OK):
            let bytes = response.body.map { [UInt8](UnsafeBufferPointer(start: $0, count: response.body_len)) } ?? []
            let raw = response.headers.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: response.headers_len), as: UTF8.self) } ?? ""
            return .success(HTTPResponse(status: response.status, headers: Self.headers(raw), body: bytes))
        case Int(ACURL_TIMEOUT): return .failure(HTTPTransportError.timedOut)
        case Int(ACURL_TOO_LARGE): return .failure(HTTPTransportError.responseTooLarge)
        case Int(ACURL_CANCELLED): return .failure(CancellationError())
        case Int(ACURL_UNAVAILABLE): return .failure(HTTPTransportError.unreachable("\(host): libcurl (libcurl4) is not installed"))
        case Int(ACURL_CONNECT_FAILED): return .failure(HTTPTransportError.unreachable("\(host): connection refused"))
        case Int(ACURL_RESOLVE_FAILED): return .failure(HTTPTransportError.unreachable("\(host): host not found"))
        case Int(ACURL_TLS_FAILED): return .failure(HTTPTransportError.unreachable("\(host): TLS handshake failed"))
        default: return .failure(HTTPTransportError.unreachable("\(host): connection lost"))
        }
    }

    /// The header fields of the last response in `raw` (names lowercased).
    static func headers(_ raw: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in raw.split(whereSeparator: \.isNewline) {  // "\r\n" is one Character
            if line.hasPrefix("HTTP/") {
                fields = [:]
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = HTTPText.trimmingWhitespace(line[..<colon]).lowercased()
            let value = HTTPText.trimmingWhitespace(line[line.index(after: colon)...])
            fields[name] = fields[name].map { "\($0), \(value)" } ?? value
        }
        return fields
    }

    /// Shared with the C side, which polls it during the transfer.
    final class CancelFlag: @unchecked Sendable {
        let pointer: UnsafeMutablePointer<Int32>

        init() {
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: 0)
        }

        func cancel() { pointer.pointee = 1 }

        deinit { pointer.deallocate() }
    }
}
#endif
