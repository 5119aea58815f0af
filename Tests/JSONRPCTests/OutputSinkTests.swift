import Dispatch
import JSONRPC
import Locking
import XCTest

final class OutputSinkTests: XCTestCase {
    /// Something still buffered goes out through the writer, which may block on
    /// a host that stopped reading: the flush then gives up at its deadline (the
    /// shortcut for an idle sink at exit must not take this for idle).
    func testABlockedWriteGivesUpAtTheDeadline() {
        let release = DispatchSemaphore(value: 0)
        let written = Locked<[UInt8]>([])
        let sink = OutputSink(write: { bytes in
            release.wait()
            written.withLock { $0 += bytes }
            return true
        }, onClosed: {})
        sink.enqueue { $0 += Array("{}".utf8) }
        XCTAssertFalse(sink.flush(before: .now() + .milliseconds(50)), "the host is not reading")
        release.signal()
        XCTAssertTrue(sink.flush(before: .now() + .seconds(5)))
        XCTAssertEqual(written.current, Array("{}\n".utf8))
    }
}
