import JSON

/// A provider's `flow`: one flow's name, or a list of the ways to log in to one identity
/// provider, each possibly with an OAuth client of its own.
extension ProviderConfig {
    public struct FlowClient: Sendable, Equatable, CustomStringConvertible {
        public var clientId: String
        public var clientSecret: String?

        public var description: String { "FlowClient(clientId: \(clientId), hasClientSecret: \(clientSecret != nil))" }
    }

    /// The configuration `flow` works with: the provider's, with the flow's own client if it has one.
    public func using(_ flow: Flow) -> ProviderConfig {
        guard let client = flowClients[flow] else { return self }
        var copy = self
        copy.clientId = client.clientId
        copy.clientSecret = client.clientSecret
        return copy
    }

    /// `flow`: one flow's name, or a list of them (the first the default), all of which
    /// `sharesAccounts`: other flows renew or revoke their own way, so an account one of
    /// them logged in could not be kept by another. An item may be `{flow, clientId, clientSecret?}`.
    /// Without `flow`, a profile's default flows (`defaults`), else a missing key.
    static func parseFlows(_ r: ConfigReader, defaults: [Flow]? = nil) throws(ConfigError) -> ([Flow], [Flow: FlowClient]) {
        guard let value = r.object["flow"] else {
            if let defaults { return (defaults, [:]) }
            throw r.error(nil, "missing required key \"flow\"")
        }
        if value.stringValue != nil { return ([try flow(value, path: r.path("flow"), file: r.file)], [:]) }
        guard case .array(let items) = value, !items.isEmpty else {
            throw r.error("flow", value.arrayValue == nil ? "expected a flow's name or a list of them, got \(value.kindName)" : "list at least one flow")
        }
        var flows: [Flow] = []
        var clients: [Flow: FlowClient] = [:]
        for (index, item) in items.enumerated() {
            let path = "\(r.path("flow"))[\(index)]"
            let flow: Flow
            if item.objectValue != nil {
                let entry = try ConfigReader(item, path: path, file: r.file)
                try entry.rejectUnknownKeys(["flow", "clientId", "clientSecret"])
                guard let name = entry.object["flow"] else { throw entry.error(nil, "missing required key \"flow\"") }
                flow = try Self.flow(name, path: entry.path("flow"), file: r.file)
                guard flow.descriptor.keys.contains("clientId") else { throw entry.error(nil, "flow \"\(flow.rawValue)\" has no OAuth client") }
                clients[flow] = FlowClient(clientId: try entry.requiredString("clientId"), clientSecret: try entry.string("clientSecret"))
            } else {
                flow = try Self.flow(item, path: path, file: r.file)
            }
            guard !flows.contains(flow) else { throw ConfigError(file: r.file, path: path, problem: "flow \"\(flow.rawValue)\" is listed twice") }
            flows.append(flow)
        }
        if flows.count > 1, let (index, odd) = flows.enumerated().first(where: { !$0.element.descriptor.sharesAccounts }) {
            let sharing = Flow.allCases.filter(\.descriptor.sharesAccounts).map(\.rawValue).joined(separator: ", ")
            throw ConfigError(file: r.file, path: "\(r.path("flow"))[\(index)]",
                              problem: "flow \"\(odd.rawValue)\" cannot share a provider with other flows: only \(sharing) can be listed together (they refresh and log out alike); give it a provider of its own")
        }
        return (flows, clients)
    }

    private static func flow(_ value: JSONValue, path: String, file: String) throws(ConfigError) -> Flow {
        guard let name = value.stringValue else { throw ConfigError(file: file, path: path, problem: "expected a string, got \(value.kindName)") }
        guard let flow = Flow(rawValue: name) else {
            let names = Flow.allCases.map(\.rawValue)
            var problem = "unknown flow \(JSONSerializer.string(.string(name))); expected one of \(names.joined(separator: ", "))"
            if let suggestion = KeySuggestion.closest(to: name, among: names) { problem += "; did you mean \"\(suggestion)\"?" }
            throw ConfigError(file: file, path: path, problem: problem)
        }
        return flow
    }
}
