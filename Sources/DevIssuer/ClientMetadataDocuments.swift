import JSON
import Wire

/// Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, MCP
/// 2025-11-25): a client whose `client_id` is a URL; the issuer fetches that URL and
/// reads the client's metadata from the JSON document found there.
///
/// The dev issuer fetches only plain-http loopback URLs (it speaks no TLS) with a
/// bounded GET of its own. Tests publish documents on the issuer itself
/// (`DevIssuer.publishClientMetadataDocument`, served at `/clients/NAME`), which also
/// lets the agent's side check a document it points to.
enum ClientMetadataDocuments {
    /// Documents over this are refused, as the draft recommends a small limit (5 KiB); generous here.
    static let maxBytes = 64 * 1024
    static let pathPrefix = "/clients/"

    /// `GET /clients/NAME`: a published document, verbatim.
    static func serve(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let name = String(request.path.dropFirst(pathPrefix.count))
        guard let document = context.state.publishedClientMetadata(name: name) else {
            return .error(404, "not_found", "no client metadata document \(name)")
        }
        return .json(200, .object(document))
    }

    /// Whether `clientID` is meant as a metadata document URL: https, or http on loopback, with a path.
    static func isDocumentURL(_ clientID: String) -> Bool {
        clientID.hasPrefix("https://") || clientID.hasPrefix("http://127.0.0.1:") || clientID.hasPrefix("http://127.0.0.1/")
    }

    /// Fetches and checks the document: its `client_id` must be the URL itself, and it must
    /// describe a public client with loopback redirect URIs (the registration rules).
    static func resolve(_ url: String) -> Result<RegisteredClient, RegistrationError> {
        guard LoopbackGet.isLoopback(url) else {
            return .failure(RegistrationError("invalid_client", "the dev issuer fetches client metadata documents only from http://127.0.0.1"))
        }
        guard let (status, body) = LoopbackGet.get(url, maxBytes: maxBytes) else {
            return .failure(RegistrationError("invalid_client", "the client metadata document could not be fetched"))
        }
        guard status == 200 else { return .failure(RegistrationError("invalid_client", "the client metadata document answered \(status)")) }
        guard body.count <= maxBytes, let document = (try? JSONParser.parse(body))?.objectValue else {
            return .failure(RegistrationError("invalid_client", "the client metadata document is not a JSON object of at most \(maxBytes) bytes"))
        }
        guard document["client_id"]?.stringValue == url else {
            return .failure(RegistrationError("invalid_client", "the client metadata document's client_id is not its URL"))
        }
        if document["client_secret"] != nil {
            return .failure(RegistrationError("invalid_client", "a client metadata document must not carry a client_secret"))
        }
        return RegisteredClient.validate(document, clientID: url).mapError { RegistrationError("invalid_client", $0.description) }
    }
}
