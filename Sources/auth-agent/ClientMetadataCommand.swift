import AuthCore
import JSON

/// `auth-agent client-metadata URL`: the Client ID Metadata Document for the agent, ready to publish
/// at URL (which becomes its `client_id`) and to name in the configuration's `clientMetadataUrl`, so
/// servers that take such documents need no registration (MCP 2025-11-25 and later prefer them).
enum ClientMetadataCommand {
    static func document(for url: String) throws(ToolFailure) -> String {
        guard let origin = Origin(url: url), origin.isSecureForBearer else {
            throw ToolFailure(.usage, "client-metadata needs the https URL the document will be published at, got '\(url)'")
        }
        // The draft asks for a path: the document is one resource on its host, not the host.
        let path = url.dropFirst(origin.description.count)
        guard path.count > 1, path.hasPrefix("/"), !url.contains("#"), !url.contains("?") else {
            throw ToolFailure(.usage, "client-metadata: the URL needs a path (https://example.com/auth-agent/client.json), and no query or fragment")
        }
        return JSONSerializer.string(.object(ClientRegistration.metadataDocument(at: url)))
    }
}
