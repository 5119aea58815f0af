import Foundation
import XCTest

/// Runs every golden transcript in Tests/Transcripts against the built binary.
final class TranscriptTests: XCTestCase {
    func testEngineTranscripts() throws {
        let files = try TranscriptRunner.allFiles().filter { !$0.lastPathComponent.hasPrefix("auth-") }
        XCTAssertGreaterThanOrEqual(files.count, 6, "engine transcripts are missing")
        for file in files {
            do {
                try TranscriptRunner().run(file)
            } catch {
                XCTFail("\(error)")
            }
        }
    }
}
