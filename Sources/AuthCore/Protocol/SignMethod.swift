import JSON
import JSONRPC
import Locking

/// `sign`: uses the provider that covers the URL. Answered on the reader thread
/// from a pre-serialized answer when the token needs no refresh first: the
/// per-message hot path.
enum SignMethod: AuthMethod {
    static let descriptor = MethodDescriptor(
        "sign", summary: "The headers that authorize an outgoing HTTP request, refreshing the token first when it is about to expire.",
        params: [.init("request", required: true), .init("provider")], result: "SignResult",
        errors: [1001, 1002, 1004, 1005, 1006, 1007, 1008, 1010])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering {
        guard case .object(let request)? = params["request"], case .string(let url)? = request["url"] else { return .free }
        return context.service.provider(forURL: url, explicit: params["provider"]?.stringValue).map(RequestOrdering.uses) ?? .free
    }

    struct Params {
        let url: String
        let provider: String?

        init(_ p: RPCParams) throws(RPCError) {
            try p.rejectUnknown(allowed: descriptor.paramNames)
            let request = RPCParams(try p.object("request"))
            try request.rejectUnknown(allowed: ["method", "url", "headers"])
            _ = try request.string("method")
            url = try request.string("url")
            _ = try request.optionalObject("headers")
            provider = try p.optionalString("provider")
        }
    }

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let params = try Params(call.params)
        let service = context.service
        let answers = context.signAnswers
        do {
            if let now = try service.signNow(url: params.url, provider: params.provider) { return .encoded(answers.text(for: now)) }
        } catch {
            throw error.rpcError
        }
        return AuthMethods.later({ () async throws(AuthError) in try await service.sign(url: params.url, provider: params.provider) },
                                 encode: { answers.value(for: $0) })
    }
}

/// `sign`'s answers, serialized once per session and provider: the same
/// generation and `Authorization` value give the same bytes.
final class SignAnswers: Sendable {
    private struct Entry {
        let generation: Int
        let authorization: String
        let value: JSONValue
        let text: JSONText
    }

    private let entries = Locked([String: Entry]())
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
        if let cached = entries.withLock({ $0[s.provider] }), cached.generation == s.generation, cached.authorization == s.authorization {
            return cached
        }
        let value: JSONValue = [
            "signed": true, "provider": .string(s.provider), "headers": ["Authorization": .string(s.authorization)],
            "expiresAt": RFC3339.json(s.expiresAt),
        ]
        let fresh = Entry(generation: s.generation, authorization: s.authorization, value: value, text: JSONText(value))
        entries.withLock { $0[s.provider] = fresh }
        return fresh
    }
}
