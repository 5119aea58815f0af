#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import XCTest
import Wire

final class LoopbackSocketTests: XCTestCase {
    func testAnEphemeralListenerGetsAPortAndAWaitTimesOut() throws {
        let listener = try LoopbackSocket.makeListener(port: 0)
        defer { LoopbackSocket.closeDescriptor(listener.fd) }
        XCTAssertNotEqual(listener.port, 0)
        XCTAssertEqual(LoopbackSocket.waitReadable([listener.fd], timeoutMilliseconds: 20), [false], "nobody connected")
        XCTAssertEqual(fcntl(listener.fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC, "a spawned browser must not inherit the listener")
    }

    func testABoundPortCannotBeBoundTwice() throws {
        let first = try LoopbackSocket.makeListener(port: 0)
        defer { LoopbackSocket.closeDescriptor(first.fd) }
        XCTAssertThrowsError(try LoopbackSocket.makeListener(port: first.port)) { error in
            XCTAssertEqual((error as? SocketError)?.operation, "bind")
            XCTAssertEqual((error as? SocketError)?.errno, EADDRINUSE)
        }
    }

    func testTheWakePipeWakesAWait() throws {
        let pipe = try LoopbackSocket.makeWakePipe()
        defer { LoopbackSocket.closeDescriptor(pipe.read); LoopbackSocket.closeDescriptor(pipe.write) }
        LoopbackSocket.writeByte(pipe.write)
        XCTAssertEqual(LoopbackSocket.waitReadable([pipe.read], timeoutMilliseconds: 1000), [true])
    }
}
