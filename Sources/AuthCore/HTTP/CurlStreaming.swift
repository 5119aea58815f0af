#if os(Linux)
import CurlShim
import Glibc
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
import Wire

extension CurlTransport: HTTPStreamingTransport {
    /// The exchange on a thread of its own (like `send`), its body handed to the reader piece by
    /// piece from curl's write callback; the head is returned with the first piece, or at the end.
    public func open(_ request: HTTPRequest) async throws -> HTTPStream {
        guard let origin = Origin(url: request.url), let url = URL(string: request.url),
              HTTPRequestChecks.foundationAgrees(url, origin),
              request.headers.allSatisfy({ HTTPRequestChecks.isHeaderSafe($0.0) && HTTPRequestChecks.isHeaderSafe($0.1) }),
              !request.method.isEmpty, request.method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") })
        else { throw HTTPTransportError.invalidURL }
        guard request.timeout > 0 else { throw HTTPTransportError.timedOut }
        let timeoutMilliseconds = Int(min(request.timeout, 86_400) * 1000)
        let noProxy = !ProxyRule.mayUseProxy(request, origin)
        let flag = CancelFlag()
        let (body, pieces) = AsyncThrowingStream<[UInt8], Error>.makeStream()
        pieces.onTermination = { _ in flag.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPStream, Error>) in
                let reader = StreamReader(head: continuation, body: body, pieces: pieces)
                let started = DetachedThread.start {
                    Self.stream(request, host: origin.host, timeoutMilliseconds: timeoutMilliseconds, noProxy: noProxy, flag: flag, reader: reader)
                }
                if !started { reader.fail(HTTPTransportError.unreachable("\(origin.host): no thread available for the request")) }
            }
        } onCancel: {
            flag.cancel()
        }
    }

    private static func stream(_ request: HTTPRequest, host: String, timeoutMilliseconds: Int, noProxy: Bool, flag: CancelFlag,
                               reader: StreamReader) {
        let headerLines = request.headers.map { "\($0.0): \($0.1)" } + ["Connection: close"]
        var cStrings = headerLines.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        var response = acurl_response()
        defer { acurl_response_free(&response) }
        let body = request.body ?? []
        let context = Unmanaged.passUnretained(reader).toOpaque()
        let code = cStrings.withUnsafeMutableBufferPointer { headers -> Int32 in
            headers.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rebound in
                body.withUnsafeBufferPointer { bodyBytes in
                    acurl_stream(request.method, request.url, rebound.baseAddress, rebound.count,
                                 bodyBytes.baseAddress, bodyBytes.count, request.body == nil ? 0 : 1,
                                 timeoutMilliseconds, noProxy ? 1 : 0, flag.pointer, &response, { context, headers, length, data, count in
                        let reader = Unmanaged<StreamReader>.fromOpaque(context!).takeUnretainedValue()
                        reader.deliverHead { CurlTransport.head(headers, length) }
                        return reader.piece(Array(UnsafeBufferPointer(start: data, count: count))) ? 1 : 0
                    }, context)
                }
            }
        }
        switch Int(code) {
        case Int(ACURL_OK):
            reader.deliverHead { Self.head(response.headers, response.headers_len) }
            reader.finish(nil)
        case Int(ACURL_TIMEOUT): reader.fail(HTTPTransportError.timedOut)
        case Int(ACURL_HEADERS_TOO_LARGE): reader.fail(HTTPTransportError.headersTooLarge(limit: Int(ACURL_MAX_HEADER_BYTES)))
        case Int(ACURL_CANCELLED): reader.fail(CancellationError())
        case Int(ACURL_UNAVAILABLE): reader.fail(HTTPTransportError.unreachable("\(host): libcurl (libcurl4) is not installed"))
        case Int(ACURL_CONNECT_FAILED): reader.fail(HTTPTransportError.unreachable("\(host): connection refused"))
        case Int(ACURL_RESOLVE_FAILED): reader.fail(HTTPTransportError.unreachable("\(host): host not found"))
        case Int(ACURL_TLS_FAILED): reader.fail(HTTPTransportError.tlsFailed(host))
        default: reader.fail(HTTPTransportError.unreachable("\(host): connection lost"))
        }
    }

    /// The status (of the last response line) and fields of the raw header bytes.
    fileprivate static func head(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> (Int, [String: String]) {
        let raw = bytes.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: length), as: UTF8.self) } ?? ""
        var status = 0
        for line in raw.split(whereSeparator: \.isNewline) where line.hasPrefix("HTTP/") {
            let words = line.split(separator: " ")
            if words.count > 1, let code = Int(words[1]) { status = code }
        }
        return (status, headers(raw))
    }

    /// Hands the head over once (to `open`'s caller) and the pieces after it (to the body's reader).
    final class StreamReader: @unchecked Sendable {
        private let lock = Lock()
        private var head: CheckedContinuation<HTTPStream, Error>?
        private let body: AsyncThrowingStream<[UInt8], Error>
        private let pieces: AsyncThrowingStream<[UInt8], Error>.Continuation

        init(head: CheckedContinuation<HTTPStream, Error>, body: AsyncThrowingStream<[UInt8], Error>,
             pieces: AsyncThrowingStream<[UInt8], Error>.Continuation) {
            self.head = head
            self.body = body
            self.pieces = pieces
        }

        func deliverHead(_ parse: () -> (Int, [String: String])) {
            guard let waiting = lock.withLock({ () -> CheckedContinuation<HTTPStream, Error>? in
                defer { head = nil }
                return head
            }) else { return }
            let (status, headers) = parse()
            waiting.resume(returning: HTTPStream(status: status, headers: headers, body: body))
        }

        /// False once the reader has stopped listening: the transfer ends.
        func piece(_ bytes: [UInt8]) -> Bool {
            if case .terminated = pieces.yield(bytes) { return false }
            return true
        }

        func finish(_ error: Error?) { pieces.finish(throwing: error) }

        /// Before the head: `open` throws; after it: the body's iteration does.
        func fail(_ error: Error) {
            let waiting = lock.withLock { () -> CheckedContinuation<HTTPStream, Error>? in
                defer { head = nil }
                return head
            }
            waiting?.resume(throwing: error)
            pieces.finish(throwing: error)
        }
    }
}
#endif
