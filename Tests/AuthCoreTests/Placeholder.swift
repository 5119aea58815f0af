import XCTest
final class PlaceholderAuthCoreTests: XCTestCase { func testNothing() {} }
