import Foundation
import JSON
import XCTest

/// A conversation with one agent process for tests that interleave requests,
/// notifications and outside actions (a browser, a server): requests can be
/// left pending while the test waits for a notification, and every wait is bounded.
final class AgentConversation {
    let agent: AgentProcess
    private var nextID = 0
    /// Messages read while waiting for something else, in arrival order.
    private var backlog: [JSONValue] = []

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String], environment: [String: String] = [:]) throws {
        agent = try AgentProcess(arguments: arguments, environment: environment)
    }

    deinit {
        agent.closeInput()
        if agent.waitForExit(timeout: 5) == nil { agent.kill() }
    }

    /// Sends a request and returns its id, without waiting for the answer.
    @discardableResult
    func send(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
        nextID += 1
        let id = JSONValue.int(Int64(nextID))
        try agent.send(JSONSerializer.string(["jsonrpc": "2.0", "id": id, "method": .string(method), "params": params]))
        return id
    }

    /// Sends a request and waits for its answer (the whole response object).
    func call(_ method: String, _ params: JSONValue = [:], timeout: TimeInterval = 15) throws -> JSONValue {
        try answer(to: try send(method, params), timeout: timeout)
    }

    /// The `result` of a request, failing with the error object or stderr otherwise.
    func result(_ method: String, _ params: JSONValue = [:], timeout: TimeInterval = 15) throws -> JSONValue {
        let response = try call(method, params, timeout: timeout)
        guard let result = response["result"] else { throw Failure(description: "\(method) failed: \(response)\(stderrNote)") }
        return result
    }

    func answer(to id: JSONValue, timeout: TimeInterval = 15) throws -> JSONValue {
        try next(timeout: timeout, what: "the answer to request \(id)") { $0["id"] == id && $0["method"] == nil }
    }

    /// The next notification `method` (earlier ones of other kinds stay in the backlog).
    func notification(_ method: String, timeout: TimeInterval = 15) throws -> JSONValue {
        try next(timeout: timeout, what: "a \(method) notification") { $0["method"]?.stringValue == method && $0["id"] == nil }
    }

    /// Waits for the first of a notification `method` or the answer to `id`, whichever comes first.
    func notificationOrAnswer(_ method: String, to id: JSONValue, timeout: TimeInterval = 15) throws -> JSONValue {
        try next(timeout: timeout, what: "a \(method) notification or the answer to \(id)") {
            ($0["method"]?.stringValue == method && $0["id"] == nil) || ($0["id"] == id && $0["method"] == nil)
        }
    }

    private func next(timeout: TimeInterval, what: String, _ matches: (JSONValue) -> Bool) throws -> JSONValue {
        if let i = backlog.firstIndex(where: matches) { return backlog.remove(at: i) }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, let line = agent.nextLine(timeout: remaining) else {
                throw Failure(description: "no \(what) within \(Int(timeout)) s; other messages: \(backlog)\(stderrNote)")
            }
            let message = try JSONParser.parse([UInt8](line))
            if matches(message) { return message }
            backlog.append(message)
        }
    }

    private var stderrNote: String {
        let text = agent.stderr
        return text.isEmpty ? "" : "\n  agent stderr:\n" + text
    }
}
