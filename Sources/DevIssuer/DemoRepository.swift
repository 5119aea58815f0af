#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
import Wire

/// `/git/demo.git`: a git repository served over smart HTTP beside the API, so the README's git
/// section can be tried against the dev issuer alone — `git clone` and `git push` through
/// `auth-agent git-credential`, the token as a Basic password (or a Bearer header), as forges
/// take it. `git http-backend` (git's own CGI) serves it from a bare repository made on first use
/// in a temporary directory, with one commit; without a valid access token, `401` with a Basic
/// challenge, which is what makes git ask its credential helpers.
final class DemoRepository: Sendable {
    static let prefix = "/git/"
    /// Held while the repository is made, so two first requests make one.
    private let making = Lock()
    private let root = Locked<String?>(nil)

    static let routes: [Route] = [Route(prefix, counter: "git", ["GET": serve, "POST": serve])]

    static func serve(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let presented = request.bearerToken ?? basicPassword(request),
              context.state.describe(accessToken: presented, now: context.now) != nil else {
            return HTTPResponse(status: 401, headers: [("WWW-Authenticate", "Basic realm=\"auth-agent dev issuer git\"")],
                                body: Array("a valid access token is needed (Basic with the token as the password, or Bearer)\n".utf8))
        }
        do {
            return try context.state.repository.cgi(request)
        } catch {
            return .error(500, "server_error", "the demo repository cannot be served: \(error)")
        }
    }

    /// The password of `Authorization: Basic base64(user:password)`.
    private static func basicPassword(_ request: HTTPRequest) -> String? {
        guard let encoded = request.authorization(scheme: "Basic"), let data = Data(base64Encoded: encoded),
              let colon = data.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        return String(decoding: data[(colon + 1)...], as: UTF8.self)
    }

    /// `git http-backend` for one request (RFC 3875's variables, the body on its stdin), its
    /// `Status:` and headers turned into the response.
    private func cgi(_ request: HTTPRequest) throws(Subprocess.Failure) -> HTTPResponse {
        let projects = try projectRoot()
        var environment = ["GIT_PROJECT_ROOT": projects, "GIT_HTTP_EXPORT_ALL": "1", "REQUEST_METHOD": request.method,
                           "PATH_INFO": String(request.path.dropFirst(Self.prefix.count - 1)), "QUERY_STRING": request.query ?? "",
                           "CONTENT_LENGTH": String(request.body.count), "REMOTE_USER": "demo", "REMOTE_ADDR": "127.0.0.1"]
        if let type = request.headers.value("content-type") { environment["CONTENT_TYPE"] = type }
        if let encoding = request.headers.value("content-encoding") { environment["HTTP_CONTENT_ENCODING"] = encoding }
        if let protocolVersion = request.headers.value("git-protocol") { environment["GIT_PROTOCOL"] = protocolVersion }
        let (_, output) = try Subprocess.run(["git", "http-backend"], input: request.body, environment: environment)
        guard let end = Self.headerEnd(output) else { throw Subprocess.Failure(description: "git http-backend answered without CGI headers") }
        var response = HTTPResponse(status: 200, body: Array(output[end.body...]))
        for line in String(decoding: output[..<end.head], as: UTF8.self).split(whereSeparator: { $0 == "\r" || $0 == "\n" }) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let (name, value) = (String(line[..<colon]), HTTPText.trimmingWhitespace(line[line.index(after: colon)...]))
            if name.lowercased() == "status" { response.status = Int(value.prefix(3)) ?? 500 } else { response.headers.append((name, value)) }
        }
        return response
    }

    /// Where the CGI headers end: the blank line (`\n\n` or `\r\n\r\n`).
    private static func headerEnd(_ bytes: [UInt8]) -> (head: Int, body: Int)? {
        var i = 0
        while i + 1 < bytes.count {
            if bytes[i] == 0x0A && bytes[i + 1] == 0x0A { return (i, i + 2) }
            if i + 3 < bytes.count, bytes[i] == 0x0D, bytes[i + 1] == 0x0A, bytes[i + 2] == 0x0D, bytes[i + 3] == 0x0A { return (i, i + 4) }
            i += 1
        }
        return nil
    }

    /// The directory holding `demo.git`, made on first use: a bare repository on `main` with a
    /// README in one commit, taking pushes.
    private func projectRoot() throws(Subprocess.Failure) -> String {
        if let made = root.current { return made }
        making.lock()
        defer { making.unlock() }
        if let made = root.current { return made }
        do {
            var template = Array("/tmp/auth-agent-dev-git-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw Subprocess.Failure(description: "cannot make a temporary directory") }
            let directory = String(cString: made)
            let repository = directory + "/demo.git"
            func git(_ arguments: [String], input: String = "") throws(Subprocess.Failure) -> String {
                let identity = ["GIT_AUTHOR_NAME": "Alice", "GIT_AUTHOR_EMAIL": "alice@example.com",
                                "GIT_COMMITTER_NAME": "Alice", "GIT_COMMITTER_EMAIL": "alice@example.com"]
                let (status, output) = try Subprocess.run(["git"] + arguments, input: Array(input.utf8), environment: identity)
                guard status == 0 else { throw Subprocess.Failure(description: "git \(arguments.first ?? "") failed (exit \(status))") }
                return String(decoding: output, as: UTF8.self).filter { $0 != "\n" }
            }
            _ = try git(["init", "--quiet", "--bare", "--initial-branch=main", repository])
            let dir = "--git-dir=" + repository
            let blob = try git([dir, "hash-object", "-w", "--stdin"], input: "# demo\n\nServed by auth-agent's dev issuer; push what you like.\n")
            let tree = try git([dir, "mktree"], input: "100644 blob \(blob)\tREADME.md\n")
            let commit = try git([dir, "commit-tree", tree, "-m", "A repository to try auth-agent git-credential on"])
            _ = try git([dir, "update-ref", "refs/heads/main", commit])
            _ = try git([dir, "config", "http.receivepack", "true"])
            root.withLock { $0 = directory }
            return directory
        }
    }

    /// Removes the repository (the issuer stopped).
    func remove() {
        guard let directory = root.withLock({ root -> String? in defer { root = nil }; return root }) else { return }
        _ = try? Subprocess.run(["rm", "-rf", "--", directory])
    }
}
