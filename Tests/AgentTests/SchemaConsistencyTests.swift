import AuthCore
import JSON
import JSONRPC
import Logging
import XCTest

/// The method registry and schema/openrpc.json must describe the same protocol.
final class SchemaConsistencyTests: XCTestCase {
    /// What the agent really serves: the engine's own methods and a registry filled as the executable fills it.
    private var declared: [MethodDescriptor] {
        let service = AuthService(config: AgentConfig(store: .memory), store: MemorySessionStore(), transport: SystemHTTPTransport(),
                                  logger: Logger(level: .error, sink: { _ in }), events: { _ in })
        var registry = MethodRegistry()
        AuthMethods.register(into: &registry, service: service)
        return RPCConnection.lifecycleMethods + registry.descriptors
    }

    func testEveryDeclaredMethodIsInTheSchemaWithTheSameShape() throws {
        let schema = try SchemaValidator.load()
        for d in declared {
            guard let m = schema.method(d.name) else {
                XCTFail("\(d.name) is declared in code but missing from schema/openrpc.json")
                continue
            }
            XCTAssertEqual(m["summary"]?.stringValue, d.summary, "\(d.name): summary differs")
            let params = m["params"]?.arrayValue ?? []
            XCTAssertEqual(params.compactMap { $0["name"]?.stringValue }, d.paramNames, "\(d.name): params differ")
            XCTAssertEqual(params.map { $0["required"]?.boolValue ?? false }, d.params.map(\.required), "\(d.name): required flags differ")
            let isNotification = m["x-notification"]?.boolValue ?? false
            XCTAssertEqual(isNotification, d.kind == .notification, "\(d.name): request/notification differs")
            let resultRef = m["result"]?["schema"]?["$ref"]?.stringValue
            XCTAssertEqual(resultRef, d.result.map { "#/components/schemas/\($0)" }, "\(d.name): result differs")
            if let r = resultRef { XCTAssertNotNil(schema.resolve(r), "\(d.name): result schema \(r) missing") }
            let codes = (m["errors"]?.arrayValue ?? []).compactMap { $0["$ref"]?.stringValue.flatMap(schema.resolve)?["code"]?.intValue }
            XCTAssertEqual(codes.map(Int.init), d.errors, "\(d.name): error codes differ")
        }
    }

    func testEverySchemaMethodIsDeclaredInCode() throws {
        let schema = try SchemaValidator.load()
        let names = Set(declared.map(\.name))
        for m in schema.methods {
            let name = m["name"]?.stringValue ?? "?"
            XCTAssertTrue(names.contains(name), "\(name) is in schema/openrpc.json but no code declares it")
        }
        XCTAssertEqual(names.count, declared.count, "a method is declared twice")
    }

    func testErrorCodesMatchTheCore() throws {
        let schema = try SchemaValidator.load()
        let errors = schema.document["components"]?["errors"]?.objectValue ?? JSONObject()
        let inSchema = Set(errors.values.compactMap { e -> String? in
            guard let code = e["code"]?.intValue, let reason = e["data"]?["reason"]?.stringValue else { return nil }
            return "\(code) \(reason) \(e["data"]?["retryable"]?.boolValue ?? false)"
        })
        let inCode = Set(AuthErrorCode.allCases.map { "\($0.rawValue) \($0.reason) \($0.retryable)" })
        XCTAssertEqual(inSchema, inCode)
    }

    func testNotificationsMatchTheCore() throws {
        let schema = try SchemaValidator.load()
        let names = Set((schema.document["x-notifications"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        XCTAssertEqual(names, Set(AuthEvent.Name.allCases.map(\.rawValue) + [AuthMethods.loginPrompt, AuthMethods.loginWaiting]))
        let asked = (schema.document["x-host-requests"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        XCTAssertEqual(asked, [AuthMethods.loginFields, AuthMethods.presentLogin], "the requests the agent sends a host")
    }

    func testValidatorRejectsWrongMessages() throws {
        let schema = try SchemaValidator.load()
        let methodOf: (JSONValue) -> String? = { _ in "logout" }
        XCTAssertNil(schema.check(message: ["jsonrpc": "2.0", "id": 1, "result": ["revoked": true]], methodOf: methodOf))
        XCTAssertNotNil(schema.check(message: ["jsonrpc": "2.0", "id": 1, "result": ["revoked": "yes"]], methodOf: methodOf))
        XCTAssertNotNil(schema.check(message: ["jsonrpc": "2.0", "id": 1, "result": ["revoked": true, "extra": 1]], methodOf: methodOf))
        XCTAssertNotNil(schema.check(message: ["jsonrpc": "2.0", "method": "userLoggedOut", "params": ["provider": "a", "reason": "bored"]], methodOf: methodOf))
        XCTAssertNotNil(schema.check(message: ["jsonrpc": "2.0", "id": 1, "error": ["code": 1006, "message": "x", "data": ["reason": "originNotAllowed", "retryable": false]]], methodOf: methodOf),
                        "logout does not declare 1006")
    }
}
