import XCTest
final class PlaceholderJSONTests: XCTestCase { func testNothing() {} }
