import XCTest
final class PlaceholderJSONRPCTests: XCTestCase { func testNothing() {} }
