@testable import AuthCore
import Foundation
import TestSupport
import XCTest

/// Every wait and every reading of the time in the core goes through `Clock` (`Sources/AuthCore/Time/`),
/// so the tests' clocks drive all of it; this reads the core's sources and names each line that does
/// otherwise. The engine (`Sources/JSONRPC`) knows no `Clock` and is not read.
final class WaitsOnTheClockTests: XCTestCase {
    static let patterns = ["asyncAfter", "Task.sleep", "usleep", "Date()", "clock_gettime", "DispatchTime.now"]

    /// Where real time stays, and why: none is a wait of the core's own (each file's doc comment says it too).
    static let exemptions: [(file: String, pattern: String, why: String)] = [
        ("HTTP/URLSessionTransport.swift", "asyncAfter",
         "the transfer's own timeout (URLSession's timeoutInterval bounds idleness only), as curl's CURLOPT_TIMEOUT bounds the socket's"),
        ("Browser/LoopbackRedirectListener.swift", "Date()",
         "a browser connection's head timeout on the listener's thread, which blocks in poll(2): a socket's own timeout"),
        ("Store/StoreDirectoryTidy.swift", "Date()",
         "file ages compared with the modification times the file system stamps, which are wall-clock time"),
        ("Store/FileSessionStore.swift", "Date()",
         "the wall-clock stamp in a set-aside corrupt file's name, for the person who finds it; no wait"),
    ]

    func testNoWaitOrTimeOutsideTheClock() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let core = root.appendingPathComponent("Sources/AuthCore")
        let files = try XCTUnwrap(FileManager.default.enumerator(atPath: core.path)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        XCTAssertGreaterThan(files.count, 50, "the core's sources were not found under \(core.path)")
        var found: [String] = []
        var used: Set<String> = []
        for file in files.sorted() where !file.hasPrefix("Time/") {
            let text = try String(contentsOf: core.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.components(separatedBy: "\n").enumerated() {
                guard !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") else { continue }
                for pattern in Self.patterns where line.contains(pattern) {
                    if Self.exemptions.contains(where: { $0.file == file && $0.pattern == pattern }) {
                        used.insert(file + pattern)
                    } else {
                        found.append("Sources/AuthCore/\(file):\(n + 1): \(pattern)")
                    }
                }
            }
        }
        XCTAssertEqual(found, [], "waits and time readings outside the Clock:\n" + found.joined(separator: "\n"))
        for e in Self.exemptions where !used.contains(e.file + e.pattern) {
            XCTFail("the exemption of \(e.pattern) in \(e.file) is no longer needed: remove it")
        }
    }
}

extension WaitsOnTheClockTests {
    /// A transfer waiting for a place in a full lane gives up at its deadline on the lane's clock
    /// (a `FakeClock`: at once, having slept the time left), and a freed place goes to the next.
    func testTheLanesWaitIsOnTheClock() async {
        let clock = FakeClock()
        let lane = TransferLane(limit: 1, clock: clock)
        let held = await lane.enter(until: clock.deadline(after: 30))
        XCTAssertTrue(held)
        let late = await lane.enter(until: clock.deadline(after: 30))
        XCTAssertFalse(late, "no place within the deadline")
        XCTAssertEqual(clock.sleeps.get(), [30])
        lane.leave()
        let next = await lane.enter(until: clock.deadline(after: 30))
        XCTAssertTrue(next)
    }

    /// `auto`'s keyring that did not answer is asked again once `KeyringAccess.retryAfter` passed on the clock.
    func testAnUnansweringKeyringIsAskedAgainAfterTheClocksRetryTime() {
        let clock = FakeClock()
        let probes = TestBox(0)
        let keyring = StoreOpening.Keyring(probe: { _ in probes.update { $0 += 1 }; return "nobody home" }, open: { _ in FakeSecretStore() })
        let access = KeyringAccess(onDemand: keyring, scope: "/nowhere", clock: clock)
        _ = access.secrets()
        _ = access.secrets()
        XCTAssertEqual(probes.get(), 1)
        clock.advance(KeyringAccess.retryAfter + 1)
        _ = access.secrets()
        XCTAssertEqual(probes.get(), 2)
    }
}
