import Foundation
import XCTest

/// Runs every golden transcript in Tests/Transcripts against the built binary.
final class TranscriptTests: XCTestCase {
    func testEngineTranscripts() throws {
        let files = try TranscriptRunner.allFiles().filter { !$0.lastPathComponent.hasPrefix("auth-") }
        XCTAssertGreaterThanOrEqual(files.count, 6, "engine transcripts are missing")
        try run(files)
    }

    func testAuthTranscripts() throws {
        let files = try TranscriptRunner.allFiles().filter { $0.lastPathComponent.hasPrefix("auth-") }
        XCTAssertGreaterThanOrEqual(files.count, 10, "auth transcripts are missing")
        try run(files)
    }

    private func run(_ files: [URL]) throws {
        for file in files {
            do {
                var runner = TranscriptRunner()
                runner.schema = try SchemaValidator.load()
                try runner.run(file)
            } catch {
                XCTFail("\(error)")
            }
        }
    }
}
