#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AuthCore
import JSON

/// `auth-agent status` for people: one row per account (or per provider with none) from the `status` result,
/// then the reasons the table cannot show (why the store is what it is, why an account is unreadable).
enum StatusTable {
    static func render(_ status: JSONValue, store: String) -> String {
        var rows = [["PROVIDER", "ACCOUNT", "STATE", "USER", "EXPIRES", "STORE"]]
        // Why `auto` keeps tokens in files is said every time, not only at the login that chose it.
        var notes = status["store"]?["reason"]?.stringValue.map { ["store \(store): \($0)"] } ?? []
        for p in status["providers"]?.arrayValue ?? [] {
            let id = p["id"]?.stringValue ?? "?"
            let accounts = p["accounts"]?.arrayValue ?? []
            let unreadable = p["unreadable"]?.arrayValue ?? []
            if accounts.isEmpty && unreadable.isEmpty {
                rows.append([id, "-", p["state"]?.stringValue ?? "?", "-", "-", store])
            }
            // One row per account; `*` marks the default.
            for a in accounts {
                let name = (a["id"]?.stringValue ?? "?") + (a["default"] == true ? " *" : "")
                rows.append([id, name, "loggedIn", AccountNames.name(a["user"]) ?? "-", a["expiresAt"]?.stringValue ?? "never", store])
            }
            // Accounts kept in a keyring this process cannot read, with why below the table.
            for u in unreadable {
                rows.append([id, u["account"]?.stringValue ?? "?", "unreadable", "-", "-", store])
                notes.append("\(id) (\(u["account"]?.stringValue ?? "?")): \(u["reason"]?.stringValue ?? "?")")
            }
        }
        // Every cell may hold a server's text (the user's name): one line per row, nothing the terminal obeys.
        rows = rows.map { $0.map(TerminalText.escaped) }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).enumerated().map { i, cell in
                i == row.count - 1 ? cell.0 : cell.0 + String(repeating: " ", count: max(0, cell.1 - cell.0.count))
            }.joined(separator: "  ")
        }.joined(separator: "\n") + "\n" + notes.map { $0 + "\n" }.joined()
    }
}
