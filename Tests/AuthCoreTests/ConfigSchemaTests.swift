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
        XCTAssertEqual(strings(s["required"]), [], "no key is required: a configuration may have no providers at all")
    }

    /// `clients` items and `learn` (where learned providers' DPoP is allowed) name what the parser reads.
    func testClientsAndLearnPropertiesMatchTheParser() throws {
        let s = try schema()
        XCTAssertEqual(keys(s["properties"]?["clients"]?["items"]?["properties"]), Set(ConfiguredClient.keys))
        XCTAssertEqual(keys(s["properties"]?["learn"]?["properties"]), Set(LearnAllowList.learnKeys))
        XCTAssertEqual(s["properties"]?["learn"]?["properties"]?["dpop"]?["type"], "boolean")
        XCTAssertEqual(s["properties"]?["clients"]?["items"]?["properties"]?["dpop"]?["type"], "boolean")
    }

    func testProviderPropertiesMatchTheParser() throws {
        let provider = try XCTUnwrap(try schema()["$defs"]?["provider"])
        XCTAssertEqual(provider["additionalProperties"], false)
        XCTAssertEqual(keys(provider["properties"]), Set(ProviderConfig.knownKeys))
        let flow = try XCTUnwrap(provider["properties"]?["flow"]?["oneOf"]?.arrayValue)
        XCTAssertEqual(flow.count, 2, "a flow's name, or a list of them")
        XCTAssertEqual(strings(flow.first?["enum"]), Set(Flow.allCases.map(\.rawValue)))
        let items = try XCTUnwrap(flow.last?["items"]?["oneOf"]?.arrayValue)
        XCTAssertEqual(strings(items.first?["enum"]), Set(Self.sharing.map(\.rawValue)), "the flows a list may hold")
        XCTAssertEqual(strings(items.last?["properties"]?["flow"]?["enum"]), Set(Self.sharing.map(\.rawValue)), "…also with a client of their own")
        XCTAssertEqual(keys(items.last?["properties"]), ["flow", "clientId", "clientSecret"])
        for (name, property) in provider["properties"]!.objectValue!.members {
            XCTAssertNotNil(property["description"]?.stringValue, "\(name) has a description")
        }
    }

    static let sharing = Flow.allCases.filter(\.descriptor.sharesAccounts)

    /// A list of flows allows the keys of all of them, and requires what each one requires.
    func testFlowListKeysMatchTheParser() throws {
        let rules = try XCTUnwrap(try schema()["$defs"]?["provider"]?["allOf"]?.arrayValue)
        let list = try XCTUnwrap(rules.first { $0["if"]?["properties"]?["flow"]?["type"] == "array" })
        XCTAssertEqual(strings(list["then"]?["propertyNames"]?["enum"]), Set(ProviderConfig.keys(for: Self.sharing)))
        let containing = rules.compactMap { $0["if"]?["properties"]?["flow"]?["contains"]?["anyOf"]?.arrayValue?.first?["const"]?.stringValue }
        XCTAssertEqual(Set(containing), Set(Self.sharing.map(\.rawValue)), "each listed flow's requirements")
    }

    func testPerFlowKeysMatchTheParser() throws {
        let rules = try XCTUnwrap(try schema()["$defs"]?["provider"]?["allOf"]?.arrayValue)
        var seen: Set<String> = []
        for rule in rules where rule["if"]?["properties"]?["flow"]?["const"] != nil {
            let flow = try XCTUnwrap(rule["if"]?["properties"]?["flow"]?["const"]?.stringValue)
            let parsed = try XCTUnwrap(Flow(rawValue: flow))
            seen.insert(flow)
            XCTAssertEqual(strings(rule["then"]?["propertyNames"]?["enum"]), Set(ProviderConfig.keys(for: parsed)), flow)
        }
        XCTAssertEqual(seen, Set(Flow.allCases.map(\.rawValue)))
    }
}
