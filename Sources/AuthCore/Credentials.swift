import JSON
import JSONRPC

/// What the user typed for a login; passwords live only as long as the login call.
public enum Credentials: Sendable {
    case password(username: String, password: String)
    case token(String)

    /// Parses the `credentials` param, naming the offending field on error.
    public static func parse(_ object: JSONObject?) throws(RPCError) -> Credentials? {
        guard let object else { return nil }
        let p = RPCParams(object)
        if object["token"] != nil {
            try p.rejectUnknown(allowed: ["token"])
            return .token(try p.string("token"))
        }
        try p.rejectUnknown(allowed: ["username", "password"])
        return .password(username: try p.string("username"), password: try p.string("password"))
    }
}
