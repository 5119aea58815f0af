import JSON
import JSONRPC
import Locking

/// `sign`: uses the provider that covers the URL. Answered on the reader thread
/// from a pre-serialized answer when the token needs no refresh first: the
/// per-message hot path.
enum SignMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "sign", summary: "The headers that authorize an outgoing HTTP request, refreshing the token first when it is about to expire.",
        params: [.init("request", required: true), .init("provider"), .init("account"), .init("scopes"), .init("audience"), .init("resource")],
        result: "SignResult", errors: [1001, 1002, 1004, 1005, 1006, 1007, 1008, 1010, 1013])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        guard case .object(let request)? = params["request"], case .string(let url)? = request["url"] else { return .free }
        return context.service.provider(forURL: url, explicit: params["provider"]?.stringValue).map(RequestOrdering.uses) ?? .free
    }

    struct Params {
        let url: String
        let provider: String?
        let shape: TokenShape?

        init(_ p: RPCParams) throws(RPCError) {
            try p.rejectUnknown(allowed: descriptor.paramNames)
            let request = RPCParams(try p.object("request"))
            try request.rejectUnknown(allowed: ["method", "url", "headers"])
            _ = try request.string("method")
            url = try request.string("url")
            _ = try request.optionalObject("headers")
            provider = try p.optionalString("provider")
            shape = try AuthMethods.shape(p)
        }
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let params = try Params(call.params)
        let account = try AuthMethods.account(call, context)
        let service = context.service
        let answers = context.signAnswers
        do {
            if let now = try service.signNow(url: params.url, provider: params.provider, account: account, shape: params.shape) {
                return .encoded(answers.text(for: now))
            }
        } catch {
            throw error.rpcError
        }
        return AuthMethods.later({ () async throws(AuthError) in
            try await service.sign(url: params.url, provider: params.provider, account: account, shape: params.shape)
        }, encode: { answers.value(for: $0) })
    }
}

/// `sign`'s answers, serialized once per session, account and shape: the same
/// generation and `Authorization` value give the same bytes.
final class SignAnswers: Sendable {
    private struct Entry {
        let account: String
        let shape: TokenShape
        let generation: Int
        let authorization: String
        let value: JSONValue
        let text: JSONText
    }

    /// By provider, a few entries each (one per account and shape in use).
    private let entries = Locked([String: [Entry]]())
    static let unsigned: JSONValue = ["signed": false, "headers": [:]]
    static let unsignedText = JSONText(unsigned)

    func text(for decision: SignDecision) -> JSONText {
        guard case .signed(let s) = decision else { return Self.unsignedText }
        return entry(s).text
    }

    func value(for decision: SignDecision) -> JSONValue {
        guard case .signed(let s) = decision else { return Self.unsigned }
        return entry(s).value
    }

    private func entry(_ s: Signature) -> Entry {
        let cached = entries.withLock { $0[s.provider]?.first { $0.account == s.account && $0.shape == s.shape } }
        if let cached, cached.generation == s.generation, cached.authorization == s.authorization {
            return cached
        }
        let value: JSONValue = [
            "signed": true, "provider": .string(s.provider), "headers": ["Authorization": .string(s.authorization)],
            "expiresAt": RFC3339.json(s.expiresAt),
        ]
        let fresh = Entry(account: s.account, shape: s.shape, generation: s.generation, authorization: s.authorization, value: value, text: JSONText(value))
        entries.withLock { table in
            var list = table[s.provider, default: []].filter { !($0.account == s.account && $0.shape == s.shape) }
            if list.count >= 16 { list.removeFirst() }  // accounts and shapes come and go; keep it small
            list.append(fresh)
            table[s.provider] = list
        }
        return fresh
    }
}
