import XCTest
import Wire

final class HTMLTextTests: XCTestCase {
    func testEscapesMarkupAndQuotes() {
        XCTAssertEqual(HTMLText.escape(#"<script>alert("x" & 'y')</script>"#),
                       "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;")
        XCTAssertEqual(HTMLText.escape("plain é 😀"), "plain é 😀")
    }
}
