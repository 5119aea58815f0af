#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import JSONRPC
import Locking

/// `sign`: uses the provider that covers the URL. Answered on the reader thread
/// from a pre-serialized answer when the token needs no refresh first: the
/// per-message hot path.
public enum SignMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "sign", summary: "The headers that authorize an outgoing HTTP request, refreshing the token first when it is about to expire.",
        params: [.init("request", required: true), .init("provider"), .init("account"), .init("scopes"), .init("audience"), .init("resource")],
        result: "SignResult", errors: [1001, 1002, 1004, 1005, 1006, 1007, 1008, 1010, 1013, 1016])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        guard case .object(let request)? = params["request"], case .string(let url)? = request["url"] else { return .free }
        return context.service.provider(forURL: url, explicit: params["provider"]?.stringValue).map(RequestOrdering.uses) ?? .free
    }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public struct Params: Sendable {
        public var method: String
        public var url: String
        public var provider: String?
        public var account: String?
        public var shape: TokenShape?

        public init(method: String = "GET", url: String, provider: String? = nil, account: String? = nil, shape: TokenShape? = nil) {
            (self.method, self.url, self.provider, self.account, self.shape) = (method, url, provider, account, shape)
        }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject {
        var o: JSONObject = ["request": ["method": .string(p.method), "url": .string(p.url)]]
        o.set("provider", p.provider)
        o.set("account", p.account)
        p.shape?.encode(into: &o)
        return o
    }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        let request = RPCParams(try p.object("request"))
        try request.rejectUnknown(allowed: ["method", "url", "headers"])
        let method = try request.string("method")
        // It goes into a DPoP proof's htm and the request line the host sends: a token, as for fetch.
        guard FetchRequest.isMethod(method) else { throw .invalidParams("'request.method' must be an HTTP method such as GET") }
        let url = try request.string("url")
        _ = try request.optionalObject("headers")
        return Params(method: method, url: url, provider: try p.optionalString("provider"), account: try p.optionalString("account"),
                      shape: try AuthMethods.shape(p))
    }

    /// `SignResult` as a host reads it: nil headers when no provider covers the URL (send it unsigned).
    public struct Result: Sendable, Equatable {
        public var provider: String?
        public var authorization: String?
        public var proof: String?
        public var expiresAt: Date?

        public init(provider: String? = nil, authorization: String? = nil, proof: String? = nil, expiresAt: Date? = nil) {
            (self.provider, self.authorization, self.proof, self.expiresAt) = (provider, authorization, proof, expiresAt)
        }

        /// The token inside a `Bearer` authorization (git and kubectl take the bare token); nil for DPoP or none.
        public var bearerToken: String? {
            guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return nil }
            return String(authorization.dropFirst("bearer ".count))
        }
    }

    /// What the handler answers is `SignAnswers`' (serialized once per token); this is the same shape.
    public static func encode(result r: Result) -> JSONValue {
        guard let provider = r.provider, let authorization = r.authorization else { return SignAnswers.unsigned }
        var headers: JSONObject = ["Authorization": .string(authorization)]
        headers.set("DPoP", r.proof)
        return ["signed": true, "provider": .string(provider), "headers": .object(headers), "expiresAt": RFC3339.json(r.expiresAt)]
    }

    public static func decode(result r: JSONValue) throws(RPCError) -> Result {
        guard r["signed"] == true else { return Result() }
        guard let authorization = r["headers"]?["Authorization"]?.stringValue else { throw .unreadableResult(name, "is signed without an Authorization") }
        return Result(provider: r["provider"]?.stringValue, authorization: authorization, proof: r["headers"]?["DPoP"]?.stringValue,
                      expiresAt: r["expiresAt"]?.stringValue.flatMap(RFC3339.parse))
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let params = try decode(params: call.params)
        let account = try AuthMethods.account(params.account, call, context)
        let answers = context.signAnswers
        let answer: NowOrWait<SignDecision>
        do {
            answer = try context.service.signNowOrWait(url: params.url, provider: params.provider, account: account, shape: params.shape, method: params.method)
        } catch {
            throw error.rpcError
        }
        switch answer {
        case .now(let decision): return .encoded(answers.text(for: decision))
        case .wait(let sign): return AuthMethods.later(sign, encode: { answers.value(for: $0) })
        }
    }

    /// The shortcut: a plain `sign` answered from the line's bytes, routed once —
    /// the lookup that finds the provider for the ordering check also signs.
    /// Whatever it does not read (other params, headers) or cannot answer at once
    /// (a token to refresh, an earlier login or logout of the provider still
    /// unanswered) goes to `handle`.
    static func shortcut(_ context: AuthMethodContext) -> RPCShortcut {
        let service = context.service
        let answers = context.signAnswers
        return { params, call throws(RPCError) in
            guard let plain = PlainParams(params) else { return nil }
            do throws(AuthError) {
                let account = context.selections.choice(nil, on: call.connection)
                let now = try service.signNow(url: plain.url, provider: plain.provider, account: account, method: plain.method,
                                              runsNow: { call.runsAtOnce(.uses($0)) })
                return now.map(answers.text(for:))
            } catch {
                throw error.rpcError
            }
        }
    }

    /// `{"request": {"method": M, "url": U}, "provider"?: P}` in any order, all
    /// strings, and nothing else: params `Params` reads the same way, with
    /// nothing to refuse. Anything more (headers, a new param), or a method `Params`
    /// would refuse, is not plain.
    struct PlainParams {
        let method: String
        let url: String
        let provider: String?

        init?(_ params: PlainObject) {
            var request: PlainObject?
            var provider: PlainString?
            guard params.forEachMember({ key, value in
                switch value {
                case .object(let o) where key.is("request"): request = o
                case .string(let s) where key.is("provider"): provider = s
                default: return false
                }
                return true
            }), let request else { return nil }
            var method: PlainString?
            var url: PlainString?
            guard request.forEachMember({ key, value in
                switch value {
                case .string(let s) where key.is("method"): method = s
                case .string(let s) where key.is("url"): url = s
                default: return false
                }
                return true
            }), let method, let url, !method.bytes.isEmpty, method.bytes.allSatisfy(HTTPRequestChecks.isTokenByte) else { return nil }
            // `FetchRequest.isMethod` on the bytes; GET, nearly every sign's, as the literal, made no copy of.
            self.method = method.is("GET") ? "GET" : method.string
            self.url = url.string
            self.provider = provider?.string
        }
    }
}

/// `sign`'s answers, serialized once per account, shape and token: an equal
/// `Signature` gives the same bytes, so the cache needs no notion of a session
/// being replaced — a new token is simply another signature. An answer with a
/// DPoP proof is made afresh every time: a proof is good for one request only.
final class SignAnswers: @unchecked Sendable {
    private final class Entry: Sendable {
        let signature: Signature
        let value: JSONValue
        let text: JSONText

        init(_ s: Signature, value: JSONValue) {
            signature = s
            self.value = value
            text = JSONText(value)
        }

        /// Cheap when it holds: the strings are then the very ones the session keeps.
        func answers(_ s: Signature) -> Bool { signature == s }
    }

    private let lock = Lock()
    /// By provider, one entry per account and shape in use.
    private var entries: [String: [Entry]] = [:]
    /// The entry given last: signs come in runs for one provider, and checking it spares hashing.
    private var last: Entry?
    static let unsigned: JSONValue = ["signed": false, "headers": [:]]
    static let unsignedText = JSONText(unsigned)

    func text(for decision: SignDecision) -> JSONText {
        guard case .signed(let s) = decision else { return Self.unsignedText }
        if s.proof != nil { return JSONText(Self.value(s)) }
        return entry(s).text
    }

    func value(for decision: SignDecision) -> JSONValue {
        guard case .signed(let s) = decision else { return Self.unsigned }
        if s.proof != nil { return Self.value(s) }
        return entry(s).value
    }

    /// The answer for `s`, with the `DPoP` header when there is a proof.
    private static func value(_ s: Signature) -> JSONValue {
        var headers: JSONObject = [:]
        for (name, value) in s.headers { headers[name] = .string(value) }
        return ["signed": true, "provider": .string(s.provider), "headers": .object(headers), "expiresAt": RFC3339.json(s.expiresAt)]
    }

    private func entry(_ s: Signature) -> Entry {
        lock.lock()
        if let last, last.answers(s) {
            lock.unlock()
            return last
        }
        if let cached = entries[s.provider]?.first(where: { $0.answers(s) }) {
            last = cached
            lock.unlock()
            return cached
        }
        lock.unlock()
        let fresh = Entry(s, value: Self.value(s))
        lock.lock()
        var list = entries[s.provider, default: []].filter { !($0.signature.account == s.account && $0.signature.shape == s.shape) }
        if list.count >= 16 { list.removeFirst() }  // accounts and shapes come and go; keep it small
        list.append(fresh)
        entries[s.provider] = list
        last = fresh
        lock.unlock()
        return fresh
    }
}
