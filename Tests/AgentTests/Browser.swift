import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plays the person's browser for login flows: plain HTTP with a cookie jar,
/// redirects followed one hop at a time (so every hop can be checked and the
/// last one can land on the agent's loopback callback), and form submission.
///
/// Built on URLSession with automatic redirects and cookies turned off, so what
/// happens on the wire is exactly what this type decides; every request has a timeout.
final class Browser {
    struct Response {
        let url: URL
        let status: Int
        /// Header names lowercased.
        let headers: [String: String]
        let body: String

        var location: String? { headers["location"] }
        var isRedirect: Bool { [301, 302, 303, 307, 308].contains(status) && location != nil }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    var timeout: TimeInterval
    var maxHops = 10
    /// Every hop of the last `navigate` or `submit`, for failure messages.
    private(set) var trail: [String] = []
    private var cookies: [String: [String: String]] = [:]
    private let session: URLSession

    init(timeout: TimeInterval = 10) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// GET `url` and follow redirects to the end; any hop that fails to connect or
    /// answers 4xx/5xx fails the whole navigation. A redirect to a URL for which
    /// `stopAt` is true is returned instead of followed.
    func navigate(_ url: String, stopAt: ((URL) -> Bool)? = nil) throws -> Response {
        guard let target = URL(string: url) else { throw Failure(description: "not a URL: \(url)") }
        trail = []
        return try follow(try fetch("GET", target, form: nil), stopAt: stopAt)
    }

    /// POSTs `form` to `url` as a browser submits a form, then follows redirects like `navigate`.
    func submit(_ form: [(String, String)], to url: URL, stopAt: ((URL) -> Bool)? = nil) throws -> Response {
        trail = []
        return try follow(try fetch("POST", url, form: form), stopAt: stopAt)
    }

    /// One request, no redirects followed; throws only when there is no HTTP answer.
    func fetch(_ method: String, _ url: URL, form: [(String, String)]?, headers: [(String, String)] = []) throws -> Response {
        try fetch(method, url, body: form.map { ("application/x-www-form-urlencoded", Data(Self.formEncode($0).utf8)) }, headers: headers)
    }

    /// One request with a JSON body, as a login page's script sends it (Glewlwyd's pages have no forms).
    func fetch(_ method: String, _ url: URL, json: String) throws -> Response {
        try fetch(method, url, body: ("application/json", Data(json.utf8)), headers: [])
    }

    private func fetch(_ method: String, _ url: URL, body: (type: String, data: Data)?, headers: [(String, String)]) throws -> Response {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let header = cookieHeader(for: url) { request.setValue(header, forHTTPHeaderField: "Cookie") }
        if let body {
            request.setValue(body.type, forHTTPHeaderField: "Content-Type")
            request.httpBody = body.data
        }
        let outcome = Outcome()
        session.dataTask(with: request) { data, response, error in
            outcome.finish(data, response, error)
        }.resume()
        guard outcome.done.wait(timeout: .now() + timeout + 1) == .success else {
            throw Failure(description: "\(method) \(url) timed out after \(timeout) s")
        }
        guard let http = outcome.response as? HTTPURLResponse else {
            throw Failure(description: "\(method) \(url) failed: \(outcome.error.map { "\($0)" } ?? "no HTTP response")")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        storeCookies(from: http, url: url)
        trail.append("\(method) \(url) → \(http.statusCode)")
        return Response(url: url, status: http.statusCode, headers: headers, body: String(decoding: outcome.data ?? Data(), as: UTF8.self))
    }

    private func follow(_ first: Response, stopAt: ((URL) -> Bool)?) throws -> Response {
        var response = first
        var hops = 0
        while response.isRedirect {
            hops += 1
            guard hops <= maxHops else { throw Failure(description: "more than \(maxHops) redirects:\n  " + trail.joined(separator: "\n  ")) }
            guard let next = URL(string: response.location!, relativeTo: response.url)?.absoluteURL else {
                throw Failure(description: "bad Location \(response.location!) from \(response.url)")
            }
            if stopAt?(next) == true { return response }
            response = try fetch("GET", next, form: nil)
        }
        guard response.status < 400 else {
            throw Failure(description: "HTTP \(response.status) from \(response.url):\n  " + trail.joined(separator: "\n  ")
                          + "\n  body: " + String(response.body.prefix(500)))
        }
        return response
    }

    // MARK: Cookies

    /// Cookies are kept per host and sent to every path and port of it, which is
    /// all these loopback-only tests need (browsers also ignore the port).
    private func storeCookies(from response: HTTPURLResponse, url: URL) {
        var fields: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { fields[name] = value }
        }
        let host = url.host ?? ""
        for cookie in HTTPCookie.cookies(withResponseHeaderFields: fields, for: url) {
            if let expires = cookie.expiresDate, expires < Date() {
                cookies[host]?[cookie.name] = nil
            } else {
                cookies[host, default: [:]][cookie.name] = cookie.value
            }
        }
    }

    func cookie(_ name: String, host: String) -> String? {
        cookies[host]?[name]
    }

    private func cookieHeader(for url: URL) -> String? {
        guard let jar = cookies[url.host ?? ""], !jar.isEmpty else { return nil }
        return jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }

    static func formEncode(_ fields: [(String, String)]) -> String {
        fields.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    /// Everything but RFC 3986 unreserved characters escaped (also right for HTTP Basic
    /// client credentials, RFC 6749 §2.3.1).
    static func percentEncode(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The result of one data task, handed from URLSession's queue to the waiting test thread.
    private final class Outcome: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        private(set) var data: Data?
        private(set) var response: URLResponse?
        private(set) var error: Error?

        func finish(_ data: Data?, _ response: URLResponse?, _ error: Error?) {
            self.data = data
            self.response = response
            self.error = error
            done.signal()
        }
    }

    /// Hands every redirect back to `Browser`, which follows it itself.
    private final class NoRedirects: NSObject, URLSessionTaskDelegate, @unchecked Sendable {
        func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void) {
            completionHandler(nil)
        }
    }
}
