#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
import Wire

/// Reads the claims of a JSON Web Token **without verifying its signature**.
///
/// The agent is a client: the server that issued a token is the one that checks
/// it. Reading the payload here serves only to schedule a refresh before `exp`
/// and to show who is logged in. Never use these claims to decide what someone
/// is allowed to do: anyone can forge an unsigned payload.
public enum JWT {
    /// The payload of a compact JWS (`header.payload.signature`) as a JSON
    /// object; `nil` for anything else, including encrypted (five-part) tokens.
    public static func claims(of token: String) -> JSONObject? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[1].isEmpty,
              let payload = Base64URL.decode(String(parts[1])),
              let value = try? JSONParser.parse(payload)
        else { return nil }
        return value.objectValue
    }

    /// The numeric `exp` claim (seconds since 1970) as a date; `nil` when absent or not a number.
    public static func expiry(of token: String) -> Date? {
        guard let exp = claims(of: token)?["exp"]?.doubleValue, exp.isFinite, exp >= 0, exp < 253_402_300_800 else {
            return nil
        }
        return Date(timeIntervalSince1970: exp)
    }
}
