import JSON

/// A JSON object from the configuration file together with where it sits
/// (`$.providers[1]`), with typed accessors that fail with a `ConfigError`
/// naming the exact member and what was wrong with it.
struct ConfigReader {
    let object: JSONObject
    let path: String
    let file: String

    init(_ value: JSONValue, path: String, file: String) throws(ConfigError) {
        guard let object = value.objectValue else {
            throw ConfigError(file: file, path: path, problem: "expected an object, got \(value.kindName)")
        }
        self.object = object
        self.path = path
        self.file = file
    }

    /// `$.key`, or `$["odd key"]` when the key is not identifier-like.
    static func member(_ path: String, _ key: String) -> String {
        // ASCII letters, digits, `_` and `$` — bytes, not Unicode properties, whose tables cost a start-up their first lookup.
        let identifier = !key.isEmpty && key.utf8.allSatisfy { c in
            switch c {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "$"): return true
            default: return false
            }
        }
        return identifier ? "\(path).\(key)" : "\(path)[\(JSONSerializer.string(.string(key)))]"
    }

    func path(_ key: String) -> String { ConfigReader.member(path, key) }

    func error(_ key: String?, _ problem: String) -> ConfigError {
        ConfigError(file: file, path: key.map(path) ?? path, problem: problem)
    }

    /// Every member must be one of `known`; a typo gets a suggestion.
    func rejectUnknownKeys(_ known: [String]) throws(ConfigError) {
        for key in object.keys where !known.contains(key) {
            var problem = "unknown key \(JSONSerializer.string(.string(key)))"
            if let suggestion = KeySuggestion.closest(to: key, among: known) {
                problem += "; did you mean \"\(suggestion)\"?"
            }
            throw error(key, problem)
        }
    }

    func has(_ key: String) -> Bool { object[key] != nil }

    func required(_ key: String) throws(ConfigError) -> JSONValue {
        guard let value = object[key] else { throw error(nil, "missing required key \"\(key)\"") }
        return value
    }

    func string(_ key: String) throws(ConfigError) -> String? {
        guard let value = object[key] else { return nil }
        guard let s = value.stringValue else { throw error(key, "expected a string, got \(value.kindName)") }
        guard !s.isEmpty else { throw error(key, "must not be empty") }
        return s
    }

    func requiredString(_ key: String) throws(ConfigError) -> String {
        _ = try required(key)
        return try string(key)!
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws(ConfigError) -> Int? {
        guard let value = object[key] else { return nil }
        guard let i = value.intValue else {
            throw error(key, value.doubleValue == nil ? "expected an integer, got \(value.kindName)" : "expected a whole number")
        }
        guard i >= Int64(range.lowerBound), i <= Int64(range.upperBound) else {
            throw error(key, "must be between \(range.lowerBound) and \(range.upperBound)")
        }
        return Int(i)
    }

    func bool(_ key: String) throws(ConfigError) -> Bool? {
        guard let value = object[key] else { return nil }
        guard let b = value.boolValue else { throw error(key, "expected a boolean, got \(value.kindName)") }
        return b
    }

    func array(_ key: String) throws(ConfigError) -> [JSONValue]? {
        guard let value = object[key] else { return nil }
        guard let a = value.arrayValue else { throw error(key, "expected an array, got \(value.kindName)") }
        return a
    }

    /// An array of non-empty strings, each with its own path for later checks.
    func strings(_ key: String) throws(ConfigError) -> [(value: String, path: String)]? {
        guard let items = try array(key) else { return nil }
        var out: [(value: String, path: String)] = []
        for (index, item) in items.enumerated() {
            let itemPath = "\(path(key))[\(index)]"
            guard let s = item.stringValue else {
                throw ConfigError(file: file, path: itemPath, problem: "expected a string, got \(item.kindName)")
            }
            guard !s.isEmpty else { throw ConfigError(file: file, path: itemPath, problem: "must not be empty") }
            out.append((s, itemPath))
        }
        return out
    }

    func child(_ key: String) throws(ConfigError) -> ConfigReader? {
        guard let value = object[key] else { return nil }
        return try ConfigReader(value, path: path(key), file: file)
    }
}
