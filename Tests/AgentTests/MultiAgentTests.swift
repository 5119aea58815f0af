import DevIssuer
import Foundation
import JSON
import JSONRPC
import Locking
import XCTest

/// Several agent processes on one store: the refresh is serialised across
/// processes, changes reach every agent, and a crash never corrupts the store.
final class MultiAgentTests: XCTestCase {
    private func subscribeAll(_ agent: AgentProcess) throws {
        let r = try agent.call("subscribe", ["events": ["userLoggedIn", "userLoggedOut", "tokenRefreshed"]], id: "sub")
        XCTAssertNotNil(r["result"], "\(r)")
    }

    /// 4 agents × 200 signs spread over several token lifetimes, against an issuer
    /// that rotates refresh tokens and revokes the whole family on reuse.
    func testFourAgentsRefreshOncePerExpiryAndNobodyIsLoggedOut() throws {
        // Tokens live 4 s and are refreshed in their last 2: an expiry every ~2 s.
        let harness = try AgentHarness(refreshWindowSeconds: 2)
        harness.issuer.setAccessTokenLifetime(4)
        let agents = try (0..<4).map { _ in try harness.spawn() }
        for a in agents { try subscribeAll(a) }
        let login = try agents[0].call("login", AgentHarness.corp, id: "login")
        XCTAssertNotNil(login["result"], "\(login)")
        // The others learn of the login from the store.
        for a in agents.dropFirst() {
            let event = a.nextLine(timeout: 2).flatMap { try? JSONParser.parse([UInt8]($0)) }
            XCTAssertEqual(event?["method"], "userLoggedIn")
        }
        harness.issuer.resetCounts()

        let perAgent = 200
        let results = Locked([JSONValue]())
        let group = DispatchGroup()
        let base = harness.issuer.baseURL
        for (n, agent) in agents.enumerated() {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var collected: [JSONValue] = []
                var notifications: [JSONValue] = []
                for i in 0..<perAgent {
                    let url = base + "/r/\(n)/\(i)"
                    if let r = try? agent.call("sign", ["request": ["method": "GET", "url": .string(url)]], id: .int(Int64(i)), notifications: &notifications) {
                        collected.append(r)
                    }
                    usleep(25_000)
                }
                collected += notifications
                results.withLock { $0 += collected }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        let all = results.current
        let answers = all.filter { $0["id"] != nil }
        let notes = all.filter { $0["method"] != nil }
        XCTAssertEqual(answers.count, 4 * perAgent, "every sign answered")
        let errors = answers.filter { $0["error"] != nil }
        XCTAssertEqual(errors.count, 0, "errors: \(errors.prefix(3))")
        let loggedOut = notes.filter { $0["method"] == "userLoggedOut" }
        XCTAssertEqual(loggedOut.count, 0, "\(loggedOut)")
        let tokens = Set(answers.compactMap { $0["result"]?["headers"]?["Authorization"]?.stringValue })
        let refreshes = harness.issuer.count("token.refresh_token")
        print("multi-agent: \(answers.count) signs, \(tokens.count) distinct tokens, \(refreshes) refreshes at the issuer")
        XCTAssertGreaterThanOrEqual(tokens.count - 1, 2, "the run should span several expiries")
        // Every token but the first came from one refresh; a background refresh that lands after the
        // last sign adds one token nobody saw. Two refreshes of one token would have revoked the family
        // (this issuer allows no reuse), which the no-logout check above rules out.
        XCTAssertTrue((tokens.count - 1...tokens.count).contains(refreshes), "one refresh per expiry, not one per agent: \(refreshes) refreshes, \(tokens.count) tokens")
    }

    /// Issue 15: agent A works as alice, agent B as bob (each selected for its own connection, at
    /// once), and agent C gets tokens for two resources for both users — all on short-lived tokens
    /// from an issuer that rotates refresh tokens and revokes the family on any reuse. Nobody is
    /// logged out, each user's streams keep their own tokens, and each token (per user and shape)
    /// is refreshed once per expiry, not once per agent.
    func testTwoAccountsInTwoAgentsAndAThirdRefreshingShapedTokensForBoth() throws {
        let harness = try AgentHarness(refreshWindowSeconds: 2)
        harness.issuer.setAccessTokenLifetime(4)
        let (a, b, c) = (try harness.spawn(), try harness.spawn(), try harness.spawn())
        for agent in [a, b, c] { try subscribeAll(agent) }
        XCTAssertNotNil(try a.call("login", AgentHarness.corp, id: "alice")["result"])
        XCTAssertNotNil(try a.call("login", ["provider": "corp", "credentials": ["username": "bob", "password": "builder"]], id: "bob")["result"])
        XCTAssertEqual(try a.call("selectAccount", ["provider": "corp", "account": "alice"], id: "select")["result"]?["account"], "alice")
        XCTAssertEqual(try b.call("selectAccount", ["provider": "corp", "account": "bob"], id: "select")["result"]?["account"], "bob")
        harness.issuer.resetCounts()

        let rounds = 120
        let base = harness.issuer.baseURL
        let resources = ["https://api.example.com", "https://files.example.com"]
        /// (stream, answer, notifications) per agent.
        let results = Locked([(String, JSONValue)]())
        let notes = Locked([JSONValue]())
        let group = DispatchGroup()
        for (name, agent) in [("a", a), ("b", b), ("c", c)] {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var collected: [(String, JSONValue)] = []
                var notifications: [JSONValue] = []
                for i in 0..<rounds {
                    let stream: String
                    let answer: JSONValue?
                    if name == "c" {
                        let (user, resource) = (i % 2 == 0 ? "alice" : "bob", resources[(i / 2) % 2])
                        stream = "\(user) \(resource)"
                        answer = try? agent.call("token", ["provider": "corp", "account": .string(user), "resource": .string(resource)],
                                                 id: .int(Int64(i)), notifications: &notifications)
                    } else {
                        stream = name == "a" ? "alice" : "bob"
                        answer = try? agent.call("sign", ["request": ["method": "GET", "url": .string(base + "/r/\(i)")]], id: .int(Int64(i)), notifications: &notifications)
                    }
                    if let answer { collected.append((stream, answer)) }
                    usleep(30_000)
                }
                results.withLock { $0 += collected }
                notes.withLock { $0 += notifications }
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 90), .success)
        let all = results.current
        XCTAssertEqual(all.count, 3 * rounds, "every request answered")
        let errors = all.filter { $0.1["error"] != nil }
        XCTAssertEqual(errors.count, 0, "errors: \(errors.prefix(3))")
        let loggedOut = notes.current.filter { $0["method"] == "userLoggedOut" }
        XCTAssertEqual(loggedOut.count, 0, "\(loggedOut)")

        func tokens(_ stream: String) -> Set<String> {
            Set(all.filter { $0.0 == stream }.compactMap { $0.1["result"]?["headers"]?["Authorization"]?.stringValue ?? $0.1["result"]?["accessToken"]?.stringValue })
        }
        XCTAssertTrue(tokens("alice").isDisjoint(with: tokens("bob")), "each agent signs as its own user")
        var report: [String] = []
        // Issuer counter per stream: the user's own token, or the shape asked for.
        let counters = ["alice": "refresh_token:alice:default", "bob": "refresh_token:bob:default"]
            .merging(Dictionary(uniqueKeysWithValues: ["alice", "bob"].flatMap { user in resources.map { ("\(user) \($0)", "refresh_token:\(user):resource=\($0)") } })) { $1 }
        for (stream, counter) in counters.sorted(by: { $0.key < $1.key }) {
            let seen = tokens(stream).count
            let refreshes = harness.issuer.count(counter)
            report.append("\(stream): \(seen) tokens, \(refreshes) refreshes")
            XCTAssertGreaterThanOrEqual(seen, 2, "\(stream) should span several expiries")
            // A shaped stream's first token is itself a grant; a background refresh may land after the last request.
            let first = stream.contains(" ") ? 0 : 1
            XCTAssertTrue((seen - first...seen - first + 1).contains(refreshes), "one refresh per expiry per token, not per agent: \(stream): \(seen) tokens, \(refreshes) refreshes")
        }
        print("two accounts, three agents, shaped tokens: " + report.joined(separator: "; "))
    }

    /// Logout and login in agent A reach agent B's subscriber within a second.
    func testChangesReachOtherAgentsWithinASecond() throws {
        let harness = try AgentHarness()
        let a = try harness.spawn()
        let b = try harness.spawn()
        try subscribeAll(b)
        var delays: [Double] = []
        for round in 0..<8 {
            let t0 = Date()
            XCTAssertNotNil(try a.call("login", AgentHarness.corp, id: .int(Int64(round * 2)))["result"])
            guard let inEvent = b.nextLine(timeout: 2).flatMap({ try? JSONParser.parse([UInt8]($0)) }) else { return XCTFail("no userLoggedIn in B") }
            delays.append(Date().timeIntervalSince(t0))
            XCTAssertEqual(inEvent["method"], "userLoggedIn")
            XCTAssertEqual(inEvent["params"]?["provider"], "corp")
            let signed = try b.call("sign", ["request": ["method": "GET", "url": .string(harness.issuer.baseURL + "/x")]], id: .string("s\(round)"))
            XCTAssertEqual(signed["result"]?["signed"], true, "\(signed)")

            let t1 = Date()
            XCTAssertNotNil(try a.call("logout", ["provider": "corp"], id: .int(Int64(round * 2 + 1)))["result"])
            guard let outEvent = b.nextLine(timeout: 2).flatMap({ try? JSONParser.parse([UInt8]($0)) }) else { return XCTFail("no userLoggedOut in B") }
            delays.append(Date().timeIntervalSince(t1))
            XCTAssertEqual(outEvent["method"], "userLoggedOut")
            XCTAssertEqual(outEvent["params"], ["provider": "corp", "account": "alice", "reason": "external"])
            let refused = try b.call("sign", ["request": ["method": "GET", "url": .string(harness.issuer.baseURL + "/x")]], id: .string("r\(round)"))
            XCTAssertEqual(refused["error"]?["code"], 1001, "\(refused)")
        }
        delays.sort()
        print(String(format: "cross-process event delay over %d events: p50 %.0f ms, max %.0f ms", delays.count,
                     delays[delays.count / 2] * 1000, delays.last! * 1000))
        XCTAssertLessThan(delays.last!, 1.0)
    }

    /// Another process holding the provider's lock too long: 1005, retryable, session kept.
    func testLockWaitsAreBounded() throws {
        let harness = try AgentHarness(lockTimeoutSeconds: 1)
        let agent = try harness.spawn()
        XCTAssertNotNil(try agent.call("login", AgentHarness.corp, id: "login")["result"])
        let fd = open(harness.storeDirectory.appendingPathComponent("corp.lock").path, O_RDWR | O_CREAT, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let started = Date()
        let blocked = try agent.call("refresh", ["provider": "corp"], id: "blocked")
        let waited = Date().timeIntervalSince(started)
        XCTAssertEqual(blocked["error"]?["code"], 1005, "\(blocked)")
        XCTAssertEqual(blocked["error"]?["data"]?["retryable"], true)
        XCTAssertGreaterThanOrEqual(waited, 0.9)
        XCTAssertLessThan(waited, 5)
        close(fd)  // releases the lock
        let freed = try agent.call("refresh", ["provider": "corp"], id: "freed")
        XCTAssertEqual(freed["result"]?["refreshed"], true, "\(freed)")
    }

    /// kill -9 at random moments during refreshes; a fresh agent must always find a
    /// parseable store, and (with a reuse grace period, as Okta and Auth0 offer) a live session.
    ///
    /// 200 kills with the grace and 60 without, in two lanes of 130 that run at once, each loop with its
    /// own issuer, store and agent. Not more lanes: with six (measured, on two cores) each agent ran so
    /// much slower that the random kills mostly missed the store's writes, and an in-place (non-atomic)
    /// write went unnoticed in one run of two; two lanes caught it as often as one loop (4 times a run, vs 3–6).
    func testKillDuringRefreshNeverCorruptsTheStore() throws {
        let lanes: [[(iterations: Int, grace: Int)]] = [[(130, 30)], [(70, 30), (60, 0)]]
        let runs = try concurrently(lanes.count, timeout: 600) { n in
            Result { try lanes[n].map { try Self.killLoop(iterations: $0.iterations, grace: $0.grace, seed: 99 + UInt64($0.grace) + 1000 * UInt64(n)) } }
        }.flatMap { try $0.get() }
        for run in runs {
            XCTAssertNotNil(run.login["result"])
            for kill in run.kills {
                XCTAssertEqual(kill.corrupt, [], "iteration \(kill.iteration) left a corrupt store")
                XCTAssertNotNil(kill.status["result"], "iteration \(kill.iteration): \(kill.status)")
                if let relogin = kill.relogin { XCTAssertNotNil(relogin["result"]) }
            }
        }
        func total(grace: Int) -> (survived: Int, iterations: Int) {
            let mine = runs.filter { $0.grace == grace }.flatMap(\.kills)
            return (mine.filter(\.survived).count, mine.count)
        }
        let survivedWithGrace = total(grace: 30)
        XCTAssertEqual(survivedWithGrace.iterations, 200)
        XCTAssertEqual(survivedWithGrace.survived, survivedWithGrace.iterations, "with a reuse grace period the session must survive every crash")
        let withoutGrace = total(grace: 0)
        XCTAssertEqual(withoutGrace.iterations, 60)
        print("kill -9 during refresh: survived \(survivedWithGrace.survived)/\(survivedWithGrace.iterations) with a 30 s reuse grace, \(withoutGrace.survived)/\(withoutGrace.iterations) without")
    }

    /// What a kill loop saw, judged on the test's thread (XCTest on Linux does not take
    /// failures from several threads at once).
    private struct KillLoopRun: Sendable {
        struct Kill: Sendable {
            let iteration: Int
            /// Store files named as corrupt after the kill.
            let corrupt: [String]
            /// A fresh agent's `status` answer.
            let status: JSONValue
            let survived: Bool
            /// The answer to logging in again, when the session was lost.
            let relogin: JSONValue?
        }
        let grace: Int
        let login: JSONValue
        var kills: [Kill] = []
    }

    private static func killLoop(iterations: Int, grace: Int, seed: UInt64) throws -> KillLoopRun {
        let harness = try AgentHarness(issuerOptions: DevIssuerOptions(refreshTokenReuseGrace: grace))
        var rng = SeededGenerator(seed: seed)
        var agent = try harness.spawn()
        var run = KillLoopRun(grace: grace, login: try agent.call("login", AgentHarness.corp, id: "login"))
        for i in 0..<iterations {
            try agent.send(JSONSerializer.string(["jsonrpc": "2.0", "id": .int(Int64(i)), "method": "refresh", "params": ["provider": "corp"]]))
            usleep(UInt32.random(in: 0...12_000, using: &rng))
            kill(agent.process.processIdentifier, SIGKILL)
            _ = agent.waitForExit(timeout: 5)
            let corrupt = try FileManager.default.contentsOfDirectory(atPath: harness.storeDirectory.path).filter { $0.contains("corrupt") }
            try RefreshCount.forget(in: harness.storeDirectory)
            agent = try harness.spawn()
            let status = try agent.call("status", id: "status")
            let check = try agent.call("refresh", ["provider": "corp"], id: "check")
            let survived = check["result"]?["refreshed"] == true
            // The session was lost: log in again so the loop goes on measuring.
            let relogin = survived ? nil : try agent.call("login", AgentHarness.corp, id: "relogin")
            run.kills.append(.init(iteration: i, corrupt: corrupt, status: status, survived: survived, relogin: relogin))
        }
        return run
    }
}
