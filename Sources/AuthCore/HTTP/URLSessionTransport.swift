import Locking

#if !os(Linux)
// Only Apple platforms use URLSession; Linux uses CurlTransport and so never links Foundation.
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `HTTPTransport`, on an ephemeral `URLSession` configured for sending credentials.
///
/// - No redirects: a 3xx comes back as the response. Following one would carry
///   a request (and its `Authorization` header or form body) to a server nobody
///   configured.
/// - No cookies, no cache, no credential storage: nothing a server says outlives
///   the exchange or leaks into the next one.
/// - A deadline for the whole exchange (`HTTPRequest.timeout`), not just between packets.
/// - A cap on the response size (default 1 MiB), so a hostile server cannot
///   exhaust memory.
/// - The URL must be one `Origin` accepts and Foundation must agree on its host
///   and port, so the request goes where the origin check thought it would.
public final class URLSessionTransport: HTTPTransport {
    public let maxResponseBytes: Int
    private let exchanges: ExchangeTable
    /// Created on first use: most agent processes (a script asking for a cached
    /// token) never touch the network, and setting up a session costs start-up time.
    private let lazySession = Locked<URLSession?>(nil)

    public init(maxResponseBytes: Int = 1 << 20) {
        self.maxResponseBytes = maxResponseBytes
        exchanges = ExchangeTable()
    }

    private var session: URLSession {
        lazySession.withLock { existing in
            if let existing { return existing }
            let configuration = URLSessionConfiguration.ephemeral
            configuration.httpCookieStorage = nil
            configuration.httpShouldSetCookies = false
            configuration.httpCookieAcceptPolicy = .never
            configuration.urlCache = nil
            configuration.urlCredentialStorage = nil
            configuration.requestCachePolicy = .reloadIgnoringLocalAndRemoteCacheData
            let created = URLSession(configuration: configuration, delegate: exchanges, delegateQueue: nil)
            existing = created
            return created
        }
    }

    deinit {
        lazySession.withLock { $0?.invalidateAndCancel() }
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (origin, url) = try HTTPRequestChecks.checked(request)
        let timeout = min(request.timeout, 86_400)
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalAndRemoteCacheData,
                                    timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        urlRequest.httpShouldHandleCookies = false
        for (name, value) in request.headers { urlRequest.addValue(value, forHTTPHeaderField: name) }
        // No keep-alive: on Linux, a reused connection that the server drops mid-request
        // left the call hanging until its timeout (10 s measured) instead of failing at
        // once. Auth-server calls are rare; a fresh connection each is cheap.
        urlRequest.setValue("close", forHTTPHeaderField: "Connection")
        urlRequest.httpBody = request.body.map { Data($0) }
        let task = session.dataTask(with: urlRequest)
        let exchanges = self.exchanges
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, Error>) in
                exchanges.begin(task, host: origin.host, limit: request.maxResponseBytes ?? maxResponseBytes, continuation: continuation)
                task.resume()
                // The transfer's own bound, in real time like curl's CURLOPT_TIMEOUT (URLSession's
                // timeoutInterval bounds only idleness): no wait of the core's, so not on its `Clock`
                // (an exemption listed in `WaitsOnTheClockTests`).
                DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak exchanges] in
                    exchanges?.expire(task)
                }
            }
        } onCancel: {
            task.cancel()
        }
    }

}

/// The session delegate: collects each task's response and body, enforces the
/// size cap and the deadline, refuses redirects, and resumes the waiting caller.
private final class ExchangeTable: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private struct Exchange {
        var host: String
        var limit: Int
        var continuation: CheckedContinuation<HTTPResponse, Error>
        var body: [UInt8] = []
        var timedOut = false
        var tooLarge = false
    }

    private let table = Locked<[Int: Exchange]>([:])

    func begin(_ task: URLSessionTask, host: String, limit: Int, continuation: CheckedContinuation<HTTPResponse, Error>) {
        table.withLock { $0[task.taskIdentifier] = Exchange(host: host, limit: limit, continuation: continuation) }
    }

    func expire(_ task: URLSessionTask) {
        let pending = table.withLock { (table: inout [Int: Exchange]) -> Bool in
            guard table[task.taskIdentifier] != nil else { return false }
            table[task.taskIdentifier]?.timedOut = true
            return true
        }
        if pending { task.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void) {
        let tooLarge = table.withLock { table -> Bool in
            guard let limit = table[dataTask.taskIdentifier]?.limit, response.expectedContentLength > Int64(limit) else { return false }
            table[dataTask.taskIdentifier]?.tooLarge = true
            return true
        }
        if tooLarge {
            completionHandler(.cancel)
        } else {
            completionHandler(.allow)
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = table.withLock { (table: inout [Int: Exchange]) -> Bool in
            guard var exchange = table[dataTask.taskIdentifier], !exchange.tooLarge else { return false }
            if exchange.body.count + data.count > exchange.limit {
                exchange.tooLarge = true
                exchange.body = []
            } else {
                exchange.body.append(contentsOf: data)
            }
            table[dataTask.taskIdentifier] = exchange
            return exchange.tooLarge
        }
        if overflow { dataTask.cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let exchange = table.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        exchange.continuation.resume(with: ExchangeTable.outcome(exchange, task.response, error))
    }

    private static func outcome(_ exchange: Exchange, _ response: URLResponse?, _ error: Error?) -> Result<HTTPResponse, Error> {
        if exchange.tooLarge { return .failure(HTTPTransportError.responseTooLarge) }
        if exchange.timedOut { return .failure(HTTPTransportError.timedOut) }
        if let error {
            guard let urlError = error as? URLError else {
                return .failure(HTTPTransportError.unreachable("\(exchange.host): network error"))
            }
            if urlError.code == .timedOut { return .failure(HTTPTransportError.timedOut) }
            if urlError.code == .cancelled { return .failure(CancellationError()) }
            if [.secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid,
                .serverCertificateHasUnknownRoot, .clientCertificateRejected, .clientCertificateRequired].contains(urlError.code) {
                return .failure(HTTPTransportError.tlsFailed(exchange.host))
            }
            return .failure(HTTPTransportError.unreachable("\(exchange.host): \(reason(urlError.code))"))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(HTTPTransportError.unreachable("\(exchange.host): not an HTTP response"))
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        return .success(HTTPResponse(status: http.statusCode, headers: headers, body: exchange.body))
    }

    /// Our own wording for URL errors, so no URL (and no query string) reaches a message.
    private static func reason(_ code: URLError.Code) -> String {
        switch code {
        case .cannotConnectToHost: return "connection refused"
        case .cannotFindHost, .dnsLookupFailed: return "host not found"
        case .networkConnectionLost: return "connection lost"
        case .notConnectedToInternet: return "no network connection"
        case .badServerResponse, .cannotParseResponse: return "malformed HTTP response"
        default: return "network error \(code.rawValue)"
        }
    }
}
#endif
