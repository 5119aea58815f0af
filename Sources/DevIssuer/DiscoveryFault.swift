/// Ways the dev issuer can break the discovery chain an agent follows to learn an API
/// by itself (RFC 9728 → RFC 8414 → RFC 7591 or a client metadata document → the
/// authorization response), one per refusal a careful client must make. A fault stays
/// on until `DevIssuer.resetFaults` (`POST /_admin/reset`) or `clearDiscoveryFaults`.
///
/// The raw values are the names used over HTTP (`POST /_admin/fault {"discovery": NAME}`)
/// and in transcripts (`!issuer NAME`).
public enum DiscoveryFault: String, CaseIterable, Sendable {
    /// The protected resource's `401` has no `resource_metadata`, so a client must try the well-known URLs.
    case noChallengeMetadata = "no-challenge-metadata"
    /// The path-inserted resource metadata (`/.well-known/oauth-protected-resource/mcp`) is 404; the root form still answers.
    case noPathMetadata = "no-path-metadata"
    /// The resource metadata names another `resource` (RFC 9728 §3.3: the client must refuse it).
    case wrongResource = "wrong-resource"
    /// The resource metadata is over 256 KiB.
    case oversizedResourceMetadata = "oversized-resource-metadata"
    /// The server metadata's `issuer` is not the issuer identifier (RFC 8414 §3.3).
    case wrongIssuer = "wrong-issuer"
    /// The server metadata names an `http` token endpoint off loopback.
    case insecureEndpoint = "insecure-endpoint"
    /// The server metadata is over 256 KiB.
    case oversizedServerMetadata = "oversized-server-metadata"
    /// The server metadata has no `registration_endpoint` (and registration answers 404).
    case noRegistrationEndpoint = "no-registration-endpoint"
    /// The server metadata does not say `client_id_metadata_document_supported`.
    case noClientMetadataDocuments = "no-client-metadata-documents"
    /// `POST /register` answers 400 `invalid_client_metadata`.
    case refuseRegistration = "refuse-registration"
    /// Registrations come without RFC 7592 management (`registration_client_uri`,
    /// `registration_access_token`), so a client must register again to widen its scope.
    case noRegistrationManagement = "no-registration-management"
    /// `POST /register` answers 201 without a `client_id`.
    case registrationWithoutClientID = "registration-without-client-id"
    /// Authorization responses carry another issuer's `iss` (RFC 9207 §2.4: the client must refuse it).
    case wrongIss = "wrong-iss"
    /// Authorization responses carry no `iss` although the metadata says they do.
    case missingIss = "missing-iss"
    /// Not a fault, a variant: the resource names the issuer `ISSUER/tenant`, whose metadata
    /// is found only by the path forms (RFC 8414 `/.well-known/oauth-authorization-server/tenant`,
    /// OpenID `/.well-known/openid-configuration/tenant` and `/tenant/.well-known/openid-configuration`),
    /// and authorization responses carry `iss=ISSUER/tenant`.
    case issuerWithPath = "issuer-with-path"
    /// With `issuerWithPath`: the two path-inserted forms are 404, so only the OpenID
    /// path-appended form (`/tenant/.well-known/openid-configuration`) answers.
    case onlyPathAppendedMetadata = "only-path-appended-metadata"
    /// The metadata names no `device_authorization_endpoint` (a server without the device flow).
    case noDeviceFlow = "no-device-flow"
    /// The metadata says `require_pushed_authorization_requests: true` (RFC 9126 §5); `/authorize` still
    /// serves clients whose policy does not require pushing (the metadata is what a client must obey).
    case requirePAR = "require-par"
    /// The metadata leaves out `authorization_response_iss_parameter_supported` (RFC 9207), which FAPI 2.0 clients refuse.
    case noIssSupport = "no-iss-support"
}
