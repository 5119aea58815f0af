import XCTest
@testable import AuthCore
import JSON

/// The published JSON schema must describe exactly what `AgentConfig.parse` accepts.
final class ConfigSchemaTests: XCTestCase {
    private func schema() throws -> JSONValue {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema/config.schema.json")
        return try JSONParser.parse(Array(try Data(contentsOf: url)))
    }

    private func keys(_ value: JSONValue?) -> Set<String> { Set(value?.objectValue?.keys ?? []) }

    private func strings(_ value: JSONValue?) -> Set<String> { Set((value?.arrayValue ?? []).compactMap(\.stringValue)) }

    func testDraftAndTopLevel() throws {
        let s = try schema()
        XCTAssertEqual(s["$schema"], "https://json-schema.org/draft/2020-12/schema")
        XCTAssertEqual(s["additionalProperties"], false)
        XCTAssertEqual(keys(s["properties"]), Set(AgentConfig.topLevelKeys))
        XCTAssertEqual(keys(s["properties"]?["store"]?["properties"]), Set(AgentConfig.storeKeys))
        XCTAssertEqual(strings(s["required"]), ["providers"])
    }

    func testProviderPropertiesMatchTheParser() throws {
        let provider = try XCTUnwrap(try schema()["$defs"]?["provider"])
        XCTAssertEqual(provider["additionalProperties"], false)
        XCTAssertEqual(keys(provider["properties"]), Set(ProviderConfig.knownKeys))
        XCTAssertEqual(strings(provider["properties"]?["flow"]?["enum"]), Set(Flow.allCases.map(\.rawValue)))
        for (name, property) in provider["properties"]!.objectValue!.members {
            XCTAssertNotNil(property["description"]?.stringValue, "\(name) has a description")
        }
    }

    func testPerFlowKeysMatchTheParser() throws {
        let rules = try XCTUnwrap(try schema()["$defs"]?["provider"]?["allOf"]?.arrayValue)
        var seen: Set<String> = []
        for rule in rules {
            let flow = try XCTUnwrap(rule["if"]?["properties"]?["flow"]?["const"]?.stringValue)
            let parsed = try XCTUnwrap(Flow(rawValue: flow))
            seen.insert(flow)
            XCTAssertEqual(strings(rule["then"]?["propertyNames"]?["enum"]), Set(ProviderConfig.keys(for: parsed)), flow)
        }
        XCTAssertEqual(seen, Set(Flow.allCases.map(\.rawValue)))
    }
}
