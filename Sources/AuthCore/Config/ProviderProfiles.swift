/// The identity providers people sign in with, each one declaration of its documented habits
/// (`ProviderProfile`), with the pages that document them. Each is chosen by `"profile": NAME` or
/// recognised from the configured issuer (`issuers`); the configuration wins wherever it says otherwise.
extension ProviderProfile {
    static let providers = [entra, google, github, gitlab, okta, auth0, keycloak]

    /// Microsoft Entra ID. OpenID discovery under `/{tenant}/v2.0` only (no RFC 8414 path); the
    /// multi-tenant endpoints' documents name `…/{tenantid}/v2.0` as issuer; a resource is asked for
    /// as the scope `{resource}/.default`, one per token request, and `resource` itself is refused
    /// (AADSTS9010010); refresh tokens only with `offline_access`; no dynamic registration.
    /// https://learn.microsoft.com/en-us/entra/identity-platform/v2-protocols-oidc
    /// https://learn.microsoft.com/en-us/entra/identity-platform/scopes-oidc
    /// https://learn.microsoft.com/en-us/entra/identity-platform/reference-error-codes
    static let entra = ProviderProfile(
        name: "entra", specification: "Microsoft Entra ID",
        issuers: ["https://login.microsoftonline.com/{tenantid}/v2.0"], discovery: .openIDAppended,
        resourceParameter: .defaultScope, refreshTokens: .offlineAccess,
        defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "profile"], registers: false,
        registrationPage: "https://entra.microsoft.com (App registrations › New registration, platform \"Mobile and desktop applications\")")

    /// Google. Desktop-app clients send their `client_secret` even with PKCE (as do TV and device
    /// clients); a refresh token only with `access_type=offline` and `prompt=consent`; a Workspace
    /// reauthentication policy refuses a refresh with `invalid_grant` / `invalid_rapt`: log in again.
    /// https://developers.google.com/identity/protocols/oauth2/native-app
    /// https://developers.google.com/identity/protocols/oauth2/web-server#offline
    /// https://support.google.com/a/answer/9368756
    static let google = ProviderProfile(
        name: "google", specification: "Google", issuers: ["https://accounts.google.com"], discovery: .openIDAppended,
        refreshTokens: .offlineConsent, secretRequired: [.authorizationCode, .deviceCode],
        refusalMeanings: ["invalid_rapt": "Google asks for a new sign-in (a Workspace reauthentication policy): log in again"],
        defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "email", "profile"], registers: false,
        registrationPage: "https://console.cloud.google.com/apis/credentials (Create credentials › OAuth client ID › Desktop app)")

    /// GitHub. No OpenID discovery for user login: fixed endpoints, the device flow at
    /// `/login/device/code`; the token endpoint answers form-encoded unless asked for JSON (the agent
    /// always sends `Accept: application/json`), and `200` with `error` while a device login is
    /// pending (`TokenEndpointResult` reads an `error` in any 2xx answer as a refusal); OAuth-app tokens never expire (no refresh
    /// token), GitHub-app user tokens last 8 h with rotating 6-month refresh tokens; the web flow
    /// needs the client secret; a refresh takes no `scope`, so no token is shaped; git takes the token
    /// with the user name `x-access-token`.
    /// https://docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps
    /// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/refreshing-user-access-tokens
    /// https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/authenticating-as-a-github-app-installation
    static let github = ProviderProfile(
        name: "github", specification: "GitHub", issuers: ["https://github.com"], discovery: .none,
        endpoints: ["authorizationEndpoint": "https://github.com/login/oauth/authorize",
                    "tokenEndpoint": "https://github.com/login/oauth/access_token",
                    "deviceAuthorizationEndpoint": "https://github.com/login/device/code",
                    "userinfoEndpoint": "https://api.github.com/user"], resourceParameter: .granted,
        secretRequired: [.authorizationCode],
        defaultFlows: [.deviceCode], defaultScopes: ["repo"], gitUsername: "x-access-token", registers: false,
        registrationPage: "https://github.com/settings/developers (New OAuth App, \"Enable Device Flow\" checked)")

    /// GitLab. OpenID discovery, PKCE, the device flow, rotating refresh tokens; git over https
    /// takes `read_repository` / `write_repository` tokens with the user name `oauth2`.
    /// https://docs.gitlab.com/api/oauth2/
    /// https://docs.gitlab.com/integration/openid_connect_provider/
    static let gitlab = ProviderProfile(
        name: "gitlab", specification: "GitLab", issuers: ["https://gitlab.com"], discovery: .openIDAppended,
        defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "read_repository", "write_repository"],
        gitUsername: "oauth2", registrationPage: "https://gitlab.com/-/user_settings/applications (or your instance's; not confidential)")

    /// Okta. Custom authorization servers at `/oauth2/{id}`, each with its own metadata (the
    /// path-appended forms) and its own audience: another API is another authorization server;
    /// refresh tokens with `offline_access`; registration needs an admin token.
    /// https://developer.okta.com/docs/concepts/auth-servers/
    /// https://developer.okta.com/docs/reference/api/oidc/
    static let okta = ProviderProfile(
        name: "okta", specification: "Okta", issuers: ["https://{org}.okta.com/oauth2/{server}", "https://{org}.okta.com"],
        discovery: .openIDAppended, resourceParameter: .authorizationServer, refreshTokens: .offlineAccess,
        defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "profile"], registers: false,
        registrationPage: "your Okta admin console (Applications › Create App Integration › OIDC › Native Application)")

    /// Auth0. `audience` selects the API (and wins over `resource`); refresh tokens with `offline_access`.
    /// https://auth0.com/docs/secure/tokens/access-tokens/get-access-tokens
    /// https://auth0.com/docs/secure/tokens/refresh-tokens/get-refresh-tokens
    /// Tenants outside the first US region have the region in their domain (`{tenant}.eu.auth0.com`):
    /// https://auth0.com/docs/get-started/auth0-overview/create-tenants/locality
    static let auth0 = ProviderProfile(
        name: "auth0", specification: "Auth0", issuers: ["https://{tenant}.auth0.com/", "https://{tenant}.{region}.auth0.com/"], resourceParameter: .audience,
        refreshTokens: .offlineAccess, defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "profile"],
        registrationPage: "https://manage.auth0.com (Applications › Create Application › Native)")

    /// Keycloak. Realms at `/realms/{realm}`, each its own issuer with its metadata under it; refresh
    /// tokens without asking (`offline_access` gives offline tokens, which report
    /// `refresh_expires_in: 0` yet expire when idle, so it is not asked for); RFC 8707 only behind a
    /// feature flag (a refused `resource` is retried without it, as for any server).
    /// https://www.keycloak.org/docs/latest/server_admin/#_offline-access
    /// https://www.keycloak.org/docs/latest/server_admin/#_oidc_token_and_saml_assertion_mappings
    static let keycloak = ProviderProfile(
        name: "keycloak", specification: "Keycloak", issuers: ["https://{host}/realms/{realm}", "http://{host}/realms/{realm}"],
        discovery: .openIDAppended, defaultFlows: [.authorizationCode, .deviceCode], defaultScopes: ["openid", "profile"],
        registrationPage: "the realm's admin console (Clients › Create client, client authentication off)")

    /// What `setup` offers of an identity provider's profile: its name, whom it is for, the issuer it
    /// is usually at (a `{name}` in it stands for the person's own part), where a client is registered.
    public struct Offer: Sendable, Equatable {
        public let name: String
        public let provider: String
        public let issuerTemplate: String?
        /// The provider's endpoints are fixed (GitHub): no issuer to ask for.
        public let fixedEndpoints: Bool
        public let registrationPage: String?
    }

    public static var offers: [Offer] {
        providers.map { Offer(name: $0.name, provider: $0.specification, issuerTemplate: $0.issuers.first,
                              fixedEndpoints: !$0.endpoints.isEmpty, registrationPage: $0.registrationPage) }
    }
}
