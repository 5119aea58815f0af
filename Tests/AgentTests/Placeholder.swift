import XCTest
final class PlaceholderAgentTests: XCTestCase { func testNothing() {} }
