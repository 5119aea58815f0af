#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON

/// Changes to the configuration file made from the command line (`config add`, `remove`, `set`),
/// so nobody has to edit JSON by hand to start.
///
/// The file is edited as a JSON document, not rebuilt from `AgentConfig`: other providers, their
/// keys, and top-level keys stay as they were (in their order). The result is validated with
/// `AgentConfig.parse` before anything is written — a change that would make the file invalid is
/// refused with the same message the agent would give at start — and written atomically, so an
/// agent starting meanwhile reads the old file or the new one.
public enum ConfigFile {
    /// The file's text with `provider` appended to `providers`; `existing` nil means no file yet.
    public static func adding(_ provider: JSONObject, to existing: [UInt8]?, file: String) throws(ConfigError) -> [UInt8] {
        var root = try document(existing, file: file)
        var providers = root["providers"]?.arrayValue ?? []
        let id = provider["id"]?.stringValue ?? ""
        if let index = providers.firstIndex(where: { $0["id"]?.stringValue == id }) {
            throw ConfigError(file: file, path: "$.providers[\(index)].id", problem: "a provider \"\(id)\" is already configured; 'auth-agent config remove \(id)' first")
        }
        providers.append(.object(provider))
        root["providers"] = .array(providers)
        return try validated(root, file: file)
    }

    /// The file's text without the provider `id`.
    public static func removing(_ id: String, from existing: [UInt8], file: String) throws(ConfigError) -> [UInt8] {
        var root = try document(existing, file: file)
        let providers = root["providers"]?.arrayValue ?? []
        guard providers.contains(where: { $0["id"]?.stringValue == id }) else {
            throw ConfigError(file: file, path: "$.providers", problem: "no provider \"\(id)\" is configured")
        }
        root["providers"] = .array(providers.filter { $0["id"]?.stringValue != id })
        return try validated(root, file: file)
    }

    /// The file's text with one key of provider `id` set (`config set ID KEY VALUE…`), without
    /// removing and adding it: `origins` and `scopes` take the values as a list, `flow` one flow or
    /// several, `openBrowser`/`dpop` `true` or `false`, `redirectPort` a number, every other key one
    /// string. A key its flows do not use is refused with the nearest one they do; `id` and
    /// `clientSecret` (a secret never goes in argv: `config add --client-secret-stdin`) are not set here.
    public static func setting(_ key: String, to values: [String], provider id: String, in existing: [UInt8], file: String) throws(ConfigError) -> [UInt8] {
        var root = try document(existing, file: file)
        var providers = root["providers"]?.arrayValue ?? []
        guard let index = providers.firstIndex(where: { $0["id"]?.stringValue == id }), case .object(var provider) = providers[index] else {
            throw ConfigError(file: file, path: "$.providers", problem: "no provider \"\(id)\" is configured")
        }
        let path = "$.providers[\(index)].\(key)"
        func refuse(_ problem: String) -> ConfigError { ConfigError(file: file, path: path, problem: problem) }
        switch key {
        case "id": throw refuse("a provider's id is not changed in place: 'auth-agent config remove \(id)', then 'config add' it under the new id")
        case "clientSecret": throw refuse("a secret never goes on the command line: 'auth-agent config remove \(id)', then 'config add' it with --client-secret-stdin")
        default: break
        }
        let flows = (try? AgentConfig.parse(existing, file: file))?.providers.first { $0.id == id }?.flows ?? []
        let known = ProviderConfig.keys(for: flows)
        guard known.contains(key) else {
            let guess = KeySuggestion.closest(to: key, among: known).map { "; did you mean \"\($0)\"?" } ?? ""
            throw refuse("\"\(key)\" is not a key of this provider's flows (\(flows.map(\.rawValue).joined(separator: ", ")))\(guess)")
        }
        guard !values.isEmpty else { throw refuse("give the value to set") }
        let one: () throws(ConfigError) -> String = { () throws(ConfigError) in
            guard values.count == 1 else { throw refuse("takes one value, got \(values.count)") }
            return values[0]
        }
        switch key {
        case "origins", "scopes": provider[key] = .array(values.map(JSONValue.string))
        case "flow", "profile": provider[key] = values.count == 1 ? .string(values[0]) : .array(values.map(JSONValue.string))
        case "openBrowser", "dpop":
            let text = try one()
            guard let flag = ["true": true, "false": false][text] else { throw refuse("takes true or false, got \"\(text)\"") }
            provider[key] = .bool(flag)
        case "redirectPort":
            let text = try one()
            guard let port = Int64(text) else { throw refuse("takes a port number, got \"\(text)\"") }
            provider[key] = .int(port)
        case "loginBody": throw refuse("an object: edit the file (auth-agent config path)")
        default: provider[key] = .string(try one())
        }
        providers[index] = .object(provider)
        root["providers"] = .array(providers)
        return try validated(root, file: file)
    }

    /// Writes `bytes` to `path` atomically; a missing directory is created 0700 and a new file 0600,
    /// an existing file keeps its mode — less what lets others read it when the file holds a
    /// secret (`AgentConfig.holdsSecret`: `config add --client-secret-stdin` into a 0644 file).
    public static func write(_ bytes: [UInt8], to path: String) throws(ConfigError) {
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        func fail(_ what: String) -> ConfigError { ConfigError(file: path, path: "$", problem: "cannot \(what): \(POSIX.errorText())") }
        try makeDirectories(directory)
        var mode = POSIX.status(path).map { $0.st_mode & 0o7777 } ?? 0o600
        if (try? AgentConfig.parse(bytes, file: path))?.holdsSecret ?? true { mode &= ~0o077 }
        let temporary = "\(directory)/.config.json.tmp-\(getpid())-\(UInt64.random(in: 0...UInt64.max))"
        let fd = POSIX.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw fail("create \(temporary)") }
        var committed = false
        defer { if !committed { unlink(temporary) } }
        guard fchmod(fd, mode) == 0, POSIX.writeAll(fd, bytes), fsync(fd) == 0 else {
            let error = fail("write \(temporary)")
            POSIX.close(fd)
            throw error
        }
        POSIX.close(fd)
        guard rename(temporary, path) == 0 else { throw fail("replace the file") }
        committed = true
        POSIX.syncDirectory(directory)
    }

    /// `mkdir -p`, with 0700 for the directories it creates (the file may hold client secrets).
    private static func makeDirectories(_ directory: String) throws(ConfigError) {
        guard POSIX.status(directory) == nil else { return }
        if let slash = directory.lastIndex(of: "/"), slash != directory.startIndex {
            try makeDirectories(String(directory[..<slash]))
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw ConfigError(file: directory, path: "$", problem: "cannot create the directory: \(POSIX.errorText())")
        }
    }

    private static func document(_ existing: [UInt8]?, file: String) throws(ConfigError) -> JSONObject {
        guard let existing else { return ["providers": .array([])] }
        // Parsed (and so validated) as the agent would, so a broken file is reported, not overwritten.
        _ = try AgentConfig.parse(existing, file: file)
        guard case .object(let root)? = try? JSONParser.parse(existing) else {
            throw ConfigError(file: file, path: "$", problem: "expected an object")
        }
        return root
    }

    private static func validated(_ root: JSONObject, file: String) throws(ConfigError) -> [UInt8] {
        let bytes = Array(pretty(.object(root), indent: "").utf8) + [0x0A]
        _ = try AgentConfig.parse(bytes, file: file)
        return bytes
    }

    /// Indented JSON for a file people read: objects and arrays of objects one member a line,
    /// arrays of plain values on one line.
    static func pretty(_ value: JSONValue, indent: String) -> String {
        let inner = indent + "  "
        switch value {
        case .object(let object) where !object.isEmpty:
            let members = object.members.map { "\(inner)\(JSONSerializer.string(.string($0))): \(pretty($1, indent: inner))" }
            return "{\n" + members.joined(separator: ",\n") + "\n\(indent)}"
        case .array(let items) where items.contains(where: { $0.objectValue != nil || $0.arrayValue != nil }):
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n\(indent)]"
        case .array(let items):
            return "[" + items.map { JSONSerializer.string($0) }.joined(separator: ", ") + "]"
        default:
            return JSONSerializer.string(value)
        }
    }
}
