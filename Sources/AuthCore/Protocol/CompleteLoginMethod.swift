import JSON
import JSONRPC

/// `completeLogin`: finishes a browser login whose browser could not reach the loopback
/// listener, with the redirect URL the person pasted back. Any connection of the agent may
/// send it (a host other than the login's: an editor beside the terminal, the laptop's side
/// of a forwarded socket); the login's own request gets the login's answer.
public enum CompleteLoginMethod: AuthMethod, RPCMethod {
    static let descriptor = MethodDescriptor(
        "completeLogin",
        summary: "Finish a waiting browser login with the whole redirect URL the browser ended at (pasted back); the login's own request gets its answer.",
        params: [.init("requestId", required: true), .init("redirectUrl", required: true)], result: "EmptyResult", errors: [1015])

    static func ordering(_ params: RPCParams, _ context: AuthMethodContext) -> RequestOrdering { .free }

    static func access(_ params: RPCParams) -> MethodAccess { .everyDoor }

    public struct Params: Sendable {
        /// The `login` request's id (its `loginPrompt`'s `requestId`).
        public var requestId: JSONValue
        public var redirectUrl: String

        public init(requestId: JSONValue, redirectUrl: String) { (self.requestId, self.redirectUrl) = (requestId, redirectUrl) }
    }

    public static var name: String { descriptor.name }

    public static func encode(_ p: Params) -> JSONObject { ["requestId": p.requestId, "redirectUrl": .string(p.redirectUrl)] }

    public static func decode(params p: RPCParams) throws(RPCError) -> Params {
        try p.rejectUnknown(allowed: descriptor.paramNames)
        guard let requestId = p["requestId"], requestId.stringValue != nil || requestId.intValue != nil else {
            throw .invalidParams("'requestId' must be the id of the login request (a string or a number)")
        }
        return Params(requestId: requestId, redirectUrl: try p.string("redirectUrl"))
    }

    public static func encode(result: Void) -> JSONValue { [:] }

    public static func decode(result: JSONValue) throws(RPCError) {}

    static func handle(_ call: RPCCall, _ context: AuthMethodContext) throws(RPCError) -> RPCOutcome {
        let p = try decode(params: call.params)
        let (requestId, url) = (p.requestId, p.redirectUrl)
        do throws(PendingLogins.Rejection) {
            try context.service.pendingLogins.complete(requestId: requestId, redirectURL: url, door: context.service.door)
        } catch .otherDoor {
            throw AuthError.notYourLogin().rpcError
        } catch {
            throw .invalidParams("'redirectUrl': \(error.message); the login keeps waiting")
        }
        return .result(encode(result: ()))
    }
}
