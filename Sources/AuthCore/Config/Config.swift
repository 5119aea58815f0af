#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's configuration file: which providers exist, how each logs in,
/// and which origins may receive each one's token.
///
/// Parsing is strict because the file is security policy: an unknown key is an
/// error (a typo must not silently disable a check), every URL is validated,
/// tokens may only travel over https or loopback, and no origin belongs to two
/// providers. Every error says where (`$.providers[1].origins[0]`) and what.
public struct AgentConfig: Sendable, Equatable {
    /// How long before expiry a token is refreshed; 0...86400, default 60.
    public var refreshWindowSeconds: Int
    /// A token with less validity left than this makes callers wait for a refresh; 0...3600, default 10.
    /// Between the refresh window and this margin, tokens are used while a refresh runs in the background.
    public var minValiditySeconds: Int = 10
    /// How long to wait for another agent process holding a provider's store lock (then 1005).
    public var lockTimeoutSeconds: Double = 15
    public var store: StoreConfig
    public var providers: [ProviderConfig]
    /// Clients registered by hand at authorization servers the agent may learn about (`clients`).
    public var clients: [ConfiguredClient] = []
    /// Set by `load` when the file holds a secret others can read (`readableSecretWarning`); not a file key.
    public internal(set) var warning: String?
    /// A Client ID Metadata Document URL the agent identifies itself with where a server accepts one.
    public var clientMetadataUrl: String?
    /// Origins where `fetch` learns an API from its 401 unasked (`learn.allow`).
    public var learnAllow = LearnAllowList()
    /// Whether learned APIs get DPoP-bound tokens where the server's metadata lists ES256
    /// (`learn.dpop`; a server's entry in `clients` may say otherwise).
    public var learnDPoP = false
    /// The configured provider that is the enterprise IdP (`learn.enterpriseIdP`): a learned API whose server takes the
    /// jwt-bearer grant gets its tokens from that provider's session by ID-JAG, with no browser (`flow: idJag`).
    public var learnEnterpriseIdP: String?
    /// The loopback port a learned API's browser login listens on, registered with a new client
    /// (`learn.redirectPort`, `mcp --callback-port`): for servers that match `redirect_uri` exactly,
    /// or a firewall that allows one port. A client registered before keeps the port it registered.
    public var learnRedirectPort: Int?
    /// Whether logins to learned providers open the browser (`login`'s `openBrowser` overrides it).
    public var openBrowser = false

    public init(refreshWindowSeconds: Int = 60, store: StoreConfig = .auto(path: nil), providers: [ProviderConfig] = []) {
        self.refreshWindowSeconds = refreshWindowSeconds
        self.store = store
        self.providers = providers
    }

    /// The refresh rule these settings make.
    public var refreshTiming: RefreshTiming {
        RefreshTiming(window: TimeInterval(refreshWindowSeconds), minValidity: TimeInterval(minValiditySeconds))
    }

    /// The origin table of all providers, in file order.
    public var originMatcher: OriginMatcher {
        OriginMatcher(providers.map { (provider: $0.id, origins: $0.origins) })
    }

    static let topLevelKeys = ["$schema", "refreshWindowSeconds", "minValiditySeconds", "lockTimeoutSeconds", "store", "providers", "clients", "clientMetadataUrl", "learn", "openBrowser"]
    static let storeKeys = ["kind", "path"]
    static let maxFileBytes = 1 << 20

    /// Parses and validates configuration text; `file` only labels errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(ConfigError) -> AgentConfig {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            let (line, column) = lineAndColumn(bytes, offset: error.offset)
            throw ConfigError(file: file, path: "$", problem: "not valid JSON: \(error.message) at line \(line), column \(column)")
        }
        let root = try ConfigReader(document, path: "$", file: file)
        try root.rejectUnknownKeys(topLevelKeys)
        _ = try root.string("$schema")
        var config = AgentConfig()
        config.refreshWindowSeconds = try root.int("refreshWindowSeconds", in: 0...86_400) ?? 60
        config.minValiditySeconds = try root.int("minValiditySeconds", in: 0...3600) ?? 10
        config.lockTimeoutSeconds = Double(try root.int("lockTimeoutSeconds", in: 1...600) ?? 15)
        if let store = try root.child("store") { config.store = try parseStore(store) }

        for (index, item) in (try root.array("clients") ?? []).enumerated() {
            config.clients.append(try ConfiguredClient.parse(try ConfigReader(item, path: "\(root.path("clients"))[\(index)]", file: file)))
        }
        if let url = try root.string("clientMetadataUrl") {
            // A Client ID Metadata Document must be https with a path (draft-ietf-oauth-client-id-metadata-document).
            guard Origin(url: url)?.isSecureForBearer == true, Discovery.path(of: url).count > 1 else {
                throw root.error("clientMetadataUrl", "must be an https URL with a path (plain http on loopback only)")
            }
            config.clientMetadataUrl = url
        }
        if let learn = try root.child("learn") {
            config.learnAllow = try LearnAllowList.parse(learn)
            config.learnDPoP = try learn.bool("dpop") ?? false
            config.learnEnterpriseIdP = try learn.string("enterpriseIdP")
            config.learnRedirectPort = try learn.int("redirectPort", in: 1...65535)
        }
        config.openBrowser = try root.bool("openBrowser") ?? false
        // No providers at all is a valid configuration: the agent may learn every API it meets.
        let items = try root.array("providers") ?? []
        var ids: [String: Int] = [:]
        var claimed: [Origin: String] = [:]
        for (index, item) in items.enumerated() {
            let reader = try ConfigReader(item, path: "\(root.path("providers"))[\(index)]", file: file)
            let provider = try ProviderConfig.parse(reader)
            if let first = ids[provider.id] {
                throw reader.error("id", "duplicate provider id \"\(provider.id)\" (also $.providers[\(first)])")
            }
            ids[provider.id] = index
            for (originIndex, origin) in provider.origins.enumerated() {
                if let owner = claimed[origin] {
                    let problem = owner == provider.id
                        ? "origin \(origin) is listed twice"
                        : "origin \(origin) is already claimed by provider \"\(owner)\"; an origin belongs to one provider"
                    throw ConfigError(file: file, path: "\(reader.path("origins"))[\(originIndex)]", problem: problem)
                }
                claimed[origin] = provider.id
            }
            config.providers.append(provider)
        }
        try SubjectConfig.resolve(&config.providers, file: file)
        if let idp = config.learnEnterpriseIdP, !config.providers.contains(where: { $0.id == idp && $0.subject == nil }) {
            throw ConfigError(file: file, path: "$.learn.enterpriseIdP", problem: "no provider \"\(idp)\" with a login of its own is configured")
        }
        return config
    }

    /// Reads and parses the file at `path`, refused when others could have written it (`checkAccess`).
    public static func load(path: String) throws(ConfigError) -> AgentConfig {
        let fd = POSIX.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw ConfigError(file: path, path: "$", problem: "cannot read the file: \(POSIX.errorText())") }
        defer { POSIX.close(fd) }
        let mode = try checkAccess(fd, path: path)
        guard let bytes = POSIX.readAll(fd, limit: maxFileBytes) else {
            let reason = errno == EFBIG ? "larger than 1 MiB" : POSIX.errorText()
            throw ConfigError(file: path, path: "$", problem: "cannot read the file: \(reason)")
        }
        var config = try parse(bytes, file: path)
        try config.checkClientKeys(file: path)
        config.warning = config.readableSecretWarning(mode: mode, path: path)
        return config
    }

    /// Every `private_key_jwt` key file read now, so a key others can read, or one that is not a
    /// usable key for its `alg`, stops the agent at start (exit 2) rather than failing a login later.
    func checkClientKeys(file: String) throws(ConfigError) {
        for (index, provider) in providers.enumerated() {
            // A key in the keyring is read at its first assertion: a start asks no keyring for it.
            guard let auth = provider.clientAuth, let path = auth.keyPath, path != ClientAuthConfig.keyring else { continue }
            let at = "$.providers[\(index)].clientAuth.key"
            switch ClientKeys.load(path) {
            case .failure(let problem): throw ConfigError(file: file, path: at, problem: problem.description)
            case .success(let key):
                if let alg = auth.alg, let problem = key.algorithmProblem(alg) {
                    throw ConfigError(file: file, path: "$.providers[\(index)].clientAuth.alg", problem: problem)
                }
            }
        }
    }

    /// `--config` if given, else `$AUTH_AGENT_CONFIG`, else
    /// `$XDG_CONFIG_HOME/auth-agent/config.json` (absolute values only, per XDG),
    /// else `$HOME/.config/auth-agent/config.json`. Empty values count as unset.
    public static func resolvePath(argument: String?, environment: [String: String]) -> String {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let argument, !argument.isEmpty { return argument }
        if let explicit = value("AUTH_AGENT_CONFIG") { return explicit }
        if let xdg = value("XDG_CONFIG_HOME"), xdg.hasPrefix("/") { return joined(xdg, "auth-agent/config.json") }
        return joined(value("HOME") ?? FileManager.default.homeDirectoryForCurrentUser.path, ".config/auth-agent/config.json")
    }

    private static func joined(_ directory: String, _ rest: String) -> String {
        directory.hasSuffix("/") ? directory + rest : directory + "/" + rest
    }

    private static func parseStore(_ r: ConfigReader) throws(ConfigError) -> StoreConfig {
        try r.rejectUnknownKeys(storeKeys)
        let kind = try r.string("kind") ?? "auto"
        let path = try r.string("path")
        if let path, kind != "memory", !path.hasPrefix("/") { throw r.error("path", "must be an absolute path") }
        switch kind {
        case "auto": return .auto(path: path)
        case "keyring": return .keyring(path: path)
        case "file": return .file(path: path)
        case "memory":
            if path != nil { throw r.error("path", "\"path\" is only used with kind \"file\", \"keyring\" or \"auto\"") }
            return .memory
        default:
            throw r.error("kind", "unknown store kind \(JSONSerializer.string(.string(kind))); expected \"auto\", \"keyring\", \"file\" or \"memory\"")
        }
    }

    /// 1-based line and column (in characters) of a byte offset, for parse errors.
    static func lineAndColumn(_ bytes: [UInt8], offset: Int) -> (Int, Int) {
        var line = 1
        var column = 1
        for byte in bytes.prefix(max(0, offset)) {
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}
