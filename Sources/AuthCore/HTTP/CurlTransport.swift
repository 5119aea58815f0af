#if os(Linux)
import CurlShim
import Glibc
import Locking
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
/// that `Origin` and Foundation's parser read alike. Besides: each transfer on a
/// thread of its own, `fetch`es bounded in number apart from auth-server calls
/// (`TransferLane`), and no proxy where one would see a credential (`ProxyRule`).
public final class CurlTransport: HTTPTransport {
    public let maxResponseBytes: Int
    /// `fetch`es (`HTTPRequest.Lane.resource`) in flight at once; auth-server calls are not counted.
    private let resourceLane: TransferLane
    /// A request's deadline, which its wait for a place in the lane counts against, is on it.
    private let clock: Clock

    public init(maxResponseBytes: Int = 1 << 20, maxConcurrentResourceTransfers: Int = 64, clock: Clock = SystemClock()) {
        self.maxResponseBytes = maxResponseBytes
        self.clock = clock
        resourceLane = TransferLane(limit: maxConcurrentResourceTransfers, clock: clock)
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        // The deadline counts from here, so time spent waiting for a place counts against it.
        let deadline = clock.deadline(after: min(request.timeout, 86_400))
        let origin = try HTTPRequestChecks.checked(request).origin
        let lane = request.lane == .resource ? resourceLane : nil
        if let lane, await !lane.enter(until: deadline) {
            try Task.checkCancellation()
            throw HTTPTransportError.timedOut
        }
        defer { lane?.leave() }
        let left = clock.remaining(until: deadline)
        guard left > 0 else { throw HTTPTransportError.timedOut }
        // Rounded up: curl reads 0 as "no timeout", so a sub-millisecond remainder must not become 0.
        let timeoutMilliseconds = Int((left * 1000).rounded(.up))
        let noProxy = !ProxyRule.mayUseProxy(request, origin)
        let flag = CancelFlag()
        let maxResponseBytes = request.maxResponseBytes ?? self.maxResponseBytes
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                // curl blocks for the whole transfer: a thread of its own, never a shared pool's, where
                // parked transfers once kept every other call (and Dispatch's timers) waiting for a thread.
                let started = DetachedThread.start {
                    continuation.resume(with: Self.perform(request, host: origin.host, timeoutMilliseconds: timeoutMilliseconds,
                                                           maxResponseBytes: maxResponseBytes, noProxy: noProxy, flag: flag))
                }
                if !started {
                    continuation.resume(throwing: HTTPTransportError.unreachable("\(origin.host): no thread available for the request"))
                }
            }
        } onCancel: {
            flag.cancel()
        }
    }

    private static func perform(_ request: HTTPRequest, host: String, timeoutMilliseconds: Int, maxResponseBytes: Int,
                                noProxy: Bool, flag: CancelFlag) -> Result<HTTPResponse, Error> {
        var response = acurl_response()
        defer { acurl_response_free(&response) }
        let code = withCRequest(request) { headers, headerCount, body, bodyCount, hasBody in
            acurl_perform(request.method, request.url, headers, headerCount, body, bodyCount, hasBody,
                          timeoutMilliseconds, maxResponseBytes, noProxy ? 1 : 0, flag.pointer, &response)
        }
        guard Int(code) == Int(ACURL_OK) else { return .failure(failure(code, host: host)) }
        let bytes = response.body.map { [UInt8](UnsafeBufferPointer(start: $0, count: response.body_len)) } ?? []
        let raw = response.headers.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: response.headers_len), as: UTF8.self) } ?? ""
        return .success(HTTPResponse(status: response.status, headers: Self.headers(raw), body: bytes))
    }

    /// Runs `transfer` with the request's header lines and body as the C bridge takes them (pointer,
    /// count, and whether there is a body at all), alive for the call.
    static func withCRequest(
        _ request: HTTPRequest,
        _ transfer: (UnsafePointer<UnsafePointer<CChar>?>?, Int, UnsafePointer<UInt8>?, Int, Int32) -> Int32
    ) -> Int32 {
        // One connection per request: see URLSessionTransport on dropped keep-alive connections.
        let headerLines = request.headers.map { "\($0.0): \($0.1)" } + ["Connection: close"]
        var cStrings = headerLines.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let body = request.body ?? []
        return cStrings.withUnsafeMutableBufferPointer { headers -> Int32 in
            headers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rebound in
                body.withUnsafeBufferPointer { bodyBytes in
                    transfer(UnsafePointer(rebound.baseAddress), rebound.count, bodyBytes.baseAddress, bodyBytes.count,
                             request.body == nil ? 0 : 1)
                }
            }
        }
    }

    /// The error for a transfer that ended with `code` (anything but `ACURL_OK`) on `host`.
    static func failure(_ code: Int32, host: String) -> Error {
        switch Int(code) {
        case Int(ACURL_TIMEOUT): return HTTPTransportError.timedOut
        case Int(ACURL_TOO_LARGE): return HTTPTransportError.responseTooLarge
        case Int(ACURL_HEADERS_TOO_LARGE): return HTTPTransportError.headersTooLarge(limit: Int(ACURL_MAX_HEADER_BYTES))
        case Int(ACURL_CANCELLED): return CancellationError()
        case Int(ACURL_UNAVAILABLE): return HTTPTransportError.unreachable("\(host): libcurl (libcurl4) is not installed")
        case Int(ACURL_CONNECT_FAILED): return HTTPTransportError.unreachable("\(host): connection refused")
        case Int(ACURL_RESOLVE_FAILED): return HTTPTransportError.unreachable("\(host): host not found")
        case Int(ACURL_TLS_FAILED): return HTTPTransportError.tlsFailed(host)
        default: return HTTPTransportError.unreachable("\(host): connection lost")
        }
    }

    /// The header fields of the last response in `raw` (names lowercased).
    ///
    /// Lines end at LF only (with an optional CR before it), as curl splits them; a CR anywhere
    /// else is replaced by a space (RFC 9112 §2.2), so a lone CR cannot start a header of its own.
    static func headers(_ raw: String) -> [String: String] {
        var fields: [String: String] = [:]
        for bytes in raw.utf8.split(separator: 0x0A) {
            var line = String(decoding: bytes.last == 0x0D ? bytes.dropLast() : bytes[...], as: UTF8.self)
            if line.utf8.contains(0x0D) { line = String(decoding: line.utf8.map { $0 == 0x0D ? 0x20 : $0 }, as: UTF8.self) }
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
