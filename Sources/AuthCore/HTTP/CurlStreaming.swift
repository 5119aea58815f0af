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
        let origin = try HTTPRequestChecks.checked(request).origin
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
        var response = acurl_response()
        defer { acurl_response_free(&response) }
        let context = Unmanaged.passUnretained(reader).toOpaque()
        let code = withCRequest(request) { headers, headerCount, body, bodyCount, hasBody in
            acurl_stream(request.method, request.url, headers, headerCount, body, bodyCount, hasBody,
                         timeoutMilliseconds, noProxy ? 1 : 0, flag.pointer, &response, { context, headers, length, data, count in
                let reader = Unmanaged<StreamReader>.fromOpaque(context!).takeUnretainedValue()
                reader.deliverHead { CurlTransport.head(headers, length) }
                return reader.piece(Array(UnsafeBufferPointer(start: data, count: count))) ? 1 : 0
            }, context)
        }
        // The stream has no size cap (curl is given none), so ACURL_TOO_LARGE never comes here.
        guard Int(code) == Int(ACURL_OK) else { return reader.fail(failure(code, host: host)) }
        reader.deliverHead { Self.head(response.headers, response.headers_len) }
        reader.finish(nil)
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
