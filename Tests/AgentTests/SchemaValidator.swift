import Foundation
import JSON

/// A small JSON Schema validator: the subset `schema/openrpc.json` uses
/// (type, const, enum, properties, required, additionalProperties, items,
/// oneOf, anyOf, pattern, format date-time, $ref into the document).
struct SchemaValidator {
    let document: JSONValue

    static func load() throws -> SchemaValidator {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("schema/openrpc.json")
        return SchemaValidator(document: try JSONParser.parse([UInt8](Data(contentsOf: url))))
    }

    /// The first violation, or nil.
    func validate(_ value: JSONValue, against schema: JSONValue, path: String = "$") -> String? {
        guard case .object(let s) = schema else { return nil }
        if let r = s["$ref"]?.stringValue {
            guard let target = resolve(r) else { return "\(path): unresolvable $ref \(r)" }
            return validate(value, against: target, path: path)
        }
        if let c = s["const"], !same(c, value) { return "\(path): \(value) is not \(c)" }
        if let e = s["enum"]?.arrayValue, !e.contains(where: { same($0, value) }) { return "\(path): \(value) is not one of \(JSONValue.array(e))" }
        if let t = s["type"] {
            let types = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            if !types.contains(where: { matches(type: $0, value) }) { return "\(path): \(value.kindName) where \(t) is expected" }
        }
        if let one = s["oneOf"]?.arrayValue {
            let passing = one.filter { validate(value, against: $0, path: path) == nil }.count
            if passing != 1 {
                let reasons = one.compactMap { validate(value, against: $0, path: path) }.joined(separator: "; ")
                return "\(path): matches \(passing) of oneOf's \(one.count) schemas (\(reasons))"
            }
        }
        if let any = s["anyOf"]?.arrayValue, !any.contains(where: { validate(value, against: $0, path: path) == nil }) {
            return "\(path): matches none of anyOf"
        }
        if case .string(let str) = value {
            if let p = s["pattern"]?.stringValue, str.range(of: p, options: .regularExpression) == nil { return "\(path): \"\(str)\" does not match \(p)" }
            if s["format"] == "date-time", !(str.count == 20 && str.hasSuffix("Z") && str.dropFirst(10).first == "T") {
                return "\(path): \"\(str)\" is not an RFC 3339 UTC time"
            }
        }
        if case .object(let o) = value {
            for r in s["required"]?.arrayValue ?? [] {
                if let k = r.stringValue, o[k] == nil { return "\(path): missing required \"\(k)\"" }
            }
            let props = s["properties"]?.objectValue ?? JSONObject()
            for (k, v) in o.members {
                if let ps = props[k] {
                    if let m = validate(v, against: ps, path: "\(path).\(k)") { return m }
                } else if let extra = s["additionalProperties"] {
                    if extra == .bool(false) { return "\(path): unexpected member \"\(k)\"" }
                    if let m = validate(v, against: extra, path: "\(path).\(k)") { return m }
                }
            }
        }
        if case .array(let items) = value, let itemSchema = s["items"] {
            for (i, item) in items.enumerated() {
                if let m = validate(item, against: itemSchema, path: "\(path)[\(i)]") { return m }
            }
        }
        return nil
    }

    private func same(_ a: JSONValue, _ b: JSONValue) -> Bool {
        if let x = a.doubleValue, let y = b.doubleValue { return x == y }
        return a == b
    }

    private func matches(type: String, _ v: JSONValue) -> Bool {
        switch (type, v) {
        case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object): return true
        case ("number", .int), ("number", .double), ("integer", .int): return true
        default: return false
        }
    }

    func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#") else { return nil }
        return JSONPointer(String(ref.dropFirst()))?.resolve(in: document)
    }

    var methods: [JSONValue] { document["methods"]?.arrayValue ?? [] }

    func method(_ name: String) -> JSONValue? { methods.first { $0["name"]?.stringValue == name } }

    func notification(_ name: String) -> JSONValue? {
        document["x-notifications"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    static let errorObject: JSONValue = [
        "type": "object", "required": ["code", "message"], "additionalProperties": false,
        "properties": ["code": ["type": "integer"], "message": ["type": "string"], "data": ["type": "object"]],
    ]

    /// Validates one message the agent sent. `methodOf` maps a response id to the method it answers.
    func check(message: JSONValue, methodOf: (JSONValue) -> String?) -> String? {
        if let batch = message.arrayValue {
            for m in batch { if let p = check(message: m, methodOf: methodOf) { return p } }
            return nil
        }
        if let name = message["method"]?.stringValue {
            guard let n = notification(name) else { return "notification \(name) is not in x-notifications" }
            return validate(message["params"] ?? .null, against: n["params"] ?? [:], path: "\(name).params")
        }
        if let error = message["error"] {
            if let p = validate(error, against: Self.errorObject, path: "error") { return p }
            let code = error["code"]?.intValue ?? 0
            if code > 0 {
                if let p = validate(error["data"] ?? .null, against: ["$ref": "#/components/schemas/ErrorData"], path: "error.data") { return p }
                if let m = methodOf(message["id"] ?? .null), let declared = method(m)?["errors"]?.arrayValue {
                    let codes = declared.compactMap { $0["$ref"]?.stringValue.flatMap(resolve)?["code"]?.intValue }
                    if !codes.contains(code) { return "\(m) answered error \(code), which its schema entry does not declare" }
                }
            }
            return nil
        }
        guard let id = message["id"], let m = methodOf(id) else { return nil }
        guard let resultSchema = method(m)?["result"]?["schema"] else { return "no result schema for \(m)" }
        return validate(message["result"] ?? .null, against: resultSchema, path: "\(m).result")
    }
}
