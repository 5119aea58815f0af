import DevIssuer
import Foundation
import JSON
import XCTest

final class HTTPServerTests: IssuerTestCase {
    func testKeepAliveServesTwoRequestsOnOneConnection() throws {
        let connection = try TestConnection(port: port)
        let first = try connection.request("GET", "/.well-known/openid-configuration")
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.header("Connection"), "keep-alive")
        XCTAssertNotNil(first.header("Content-Length"))
        let second = try connection.request("POST", "/sessions", headers: [("Content-Type", "application/json")],
                                            body: JSONSerializer.bytes(["session": ["username": "bob", "password": "builder"]]))
        XCTAssertEqual(second.status, 201)
        XCTAssertEqual(issuer.counts, ["discovery": 1, "session": 1])
    }

    func testPipelinedRequestsAreAnsweredInOrder() throws {
        let connection = try TestConnection(port: port)
        let request = "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\nGET /.well-known/openid-configuration HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
        try connection.send(request)
        XCTAssertEqual(try connection.readResponse().status, 404)
        let last = try connection.readResponse()
        XCTAssertEqual(last.status, 200)
        XCTAssertEqual(last.header("Connection"), "close")
        XCTAssertTrue(connection.closesWithoutResponse())
    }

    func testExpectContinueIsHonoured() throws {
        let connection = try TestConnection(port: port)
        let body = JSONSerializer.bytes(["session": ["username": "alice", "password": "wonderland"]])
        try connection.send("POST /sessions HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: \(body.count)\r\n\r\n")
        try connection.send(body)
        XCTAssertEqual(try connection.readResponse().status, 201)
    }

    func testOversizedRequestIs413() throws {
        let connection = try TestConnection(port: port)
        try connection.send("POST /token HTTP/1.1\r\nHost: x\r\nContent-Length: \(2 << 20)\r\n\r\n")
        XCTAssertEqual(try connection.readResponse().status, 413)

        let headers = try TestConnection(port: port)
        let filler = String(repeating: "a", count: 8 * 1024)
        let oversizedHead = "GET / HTTP/1.1\r\n" + (0..<130).map { "X-Filler-\($0): \(filler)\r\n" }.joined()
        try headers.send(oversizedHead)
        XCTAssertEqual(try headers.readResponse().status, 413)
        XCTAssertEqual(issuer.counts, [:], "refused requests never reach a route")
    }

    func testMalformedRequestsAre400() throws {
        for raw in ["GARBAGE\r\n\r\n", "GET /x HTTP/1.1 extra\r\n\r\n", "GET nopath HTTP/1.1\r\n\r\n",
                    "GET / HTTP/1.1\r\nBad Header\r\n\r\n", "POST /sessions HTTP/1.1\r\nContent-Length: 1x\r\n\r\n"] {
            let connection = try TestConnection(port: port)
            try connection.send(raw)
            let response = try connection.readResponse()
            XCTAssertEqual(response.status, 400, raw)
            XCTAssertEqual(response.header("Connection"), "close")
        }
        let chunked = try TestConnection(port: port)
        try chunked.send("POST /token HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
        XCTAssertEqual(try chunked.readResponse().status, 501)
    }

    func testUnknownPathAndWrongMethod() throws {
        let missing = try get("/nope")
        XCTAssertEqual(missing.status, 404)
        XCTAssertEqual(missing.json?["error"], "not_found")
        let wrong = try get("/token")
        XCTAssertEqual(wrong.status, 405)
        XCTAssertEqual(wrong.header("Allow"), "POST")
        XCTAssertEqual(try send("DELETE", "/userinfo").status, 405)
    }

    func testConcurrentClientsAreServed() throws {
        let port = self.port
        let statuses = StatusLog()
        let body = JSONSerializer.bytes(["session": ["username": "alice", "password": "wonderland"]])
        DispatchQueue.concurrentPerform(iterations: 12) { _ in
            let connection = try? TestConnection(port: port)
            let response = try? connection?.request("POST", "/sessions", headers: [("Content-Type", "application/json")], body: body)
            statuses.append(response?.status ?? -1)
        }
        XCTAssertEqual(statuses.values, Array(repeating: 201, count: 12))
        XCTAssertEqual(issuer.count("session"), 12)
    }

    func testStopClosesConnectionsAndFreesThePort() throws {
        let idle = try TestConnection(port: port)
        XCTAssertEqual(try idle.request("GET", "/.well-known/openid-configuration").status, 200)
        issuer.stop()
        issuer.stop()
        XCTAssertTrue(idle.closesWithoutResponse(), "open keep-alive connections are closed")
        XCTAssertThrowsError(try TestConnection(port: port)) { error in
            XCTAssertEqual(error as? TestClientError, .connect(ECONNREFUSED))
        }

        let successor = DevIssuer()
        defer { successor.stop() }
        XCTAssertEqual(try successor.start(port: port), port)
        XCTAssertEqual(successor.baseURL, "http://127.0.0.1:\(port)")
        XCTAssertThrowsError(try successor.start()) { XCTAssertEqual($0 as? DevIssuerError, .alreadyStarted) }
        let connection = try TestConnection(port: port)
        XCTAssertEqual(try connection.request("GET", "/.well-known/openid-configuration").status, 200)
    }
}

/// Statuses collected from concurrent clients.
private final class StatusLog: @unchecked Sendable {
    private let lock = NSLock()
    private var statuses: [Int] = []

    func append(_ status: Int) {
        lock.lock()
        statuses.append(status)
        lock.unlock()
    }

    var values: [Int] {
        lock.lock()
        defer { lock.unlock() }
        return statuses
    }
}
