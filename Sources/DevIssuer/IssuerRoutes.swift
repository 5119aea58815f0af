#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON

/// What a handler sees besides the request.
struct RouteContext: Sendable {
    let state: IssuerState
    /// The issuer identifier and base of every endpoint URL: `http://127.0.0.1:PORT`.
    let issuer: String
    /// Seconds since 1970, read once per request after any injected latency.
    let now: Double
}

typealias RouteHandler = @Sendable (HTTPRequest, RouteContext) -> HTTPResponse

/// One path the issuer serves: a handler per method and the counter keys a request bumps.
/// A path ending in `/` serves every path under it (when no route names that path exactly).
///
/// Adding an endpoint is one handler function and one entry in `IssuerRoutes.public`.
struct Route: Sendable {
    let path: String
    let handlers: [String: RouteHandler]
    let counterKeys: @Sendable (HTTPRequest) -> [String]

    init(_ path: String, counter: String, _ handlers: [String: RouteHandler]) {
        self.init(path, counterKeys: { _ in [counter] }, handlers)
    }

    init(_ path: String, counterKeys: @escaping @Sendable (HTTPRequest) -> [String], _ handlers: [String: RouteHandler]) {
        self.path = path
        self.counterKeys = counterKeys
        self.handlers = handlers
    }
}

/// The route tables.
enum IssuerRoutes {
    /// Counted and subject to injected faults.
    static let `public`: [Route] = [
        Route("/sessions", counter: "session", ["POST": SessionEndpoints.login]),
        Route("/sessions/refresh", counter: "sessionRefresh", ["POST": SessionEndpoints.refresh]),
        Route("/sessions/logout", counter: "sessionLogout", ["POST": SessionEndpoints.logout]),
        Route("/token", counterKeys: TokenEndpoint.counterKeys, ["POST": TokenEndpoint.handle]),
        Route("/par", counter: "par", ["POST": PushedAuthorizationEndpoint.handle]),
        Route("/authorize", counter: "authorize", ["GET": AuthorizationEndpoint.get, "POST": AuthorizationEndpoint.post]),
        Route("/device_authorization", counter: "deviceAuthorization", ["POST": DeviceAuthorizationEndpoint.handle]),
        Route(DeviceVerificationPage.path, counter: "device", ["GET": DeviceVerificationPage.get, "POST": DeviceVerificationPage.post]),
        Route("/revoke", counter: "revoke", ["POST": RevocationEndpoint.handle]),
        Route("/userinfo", counter: "userinfo", ["GET": UserInfoEndpoint.handle, "POST": UserInfoEndpoint.handle]),
        Route("/.well-known/openid-configuration", counter: "discovery", ["GET": DiscoveryEndpoint.handle]),
        Route("/.well-known/oauth-authorization-server", counter: "discovery", ["GET": DiscoveryEndpoint.handle]),
        Route("/register", counter: "register", ["POST": RegistrationEndpoint.handle]),
        Route(RegistrationEndpoint.managementPrefix, counter: "registrationManagement",
              ["GET": RegistrationEndpoint.manage, "PUT": RegistrationEndpoint.manage, "DELETE": RegistrationEndpoint.manage]),
        Route("/jwks", counter: "jwks", ["GET": IDJAG.jwks]),
        Route(ClientMetadataDocuments.pathPrefix, counter: "clientMetadata", ["GET": ClientMetadataDocuments.serve]),
    ] + DiscoveryEndpoint.tenantRoutes + ProtectedAPI.routes + LearnableResource.routes + DemoRepository.routes

    /// Control plane for tests and the `dev-issuer` CLI: never counted, never faulted.
    static let admin: [Route] = [
        Route("/_admin/stats", counterKeys: { _ in [] }, ["GET": AdminEndpoints.stats]),
        Route("/_admin/grants", counterKeys: { _ in [] }, ["GET": AdminEndpoints.grants]),
        Route("/_admin/fault", counterKeys: { _ in [] }, ["POST": AdminEndpoints.fault]),
        Route("/_admin/reset", counterKeys: { _ in [] }, ["POST": AdminEndpoints.reset]),
        Route("/_admin/unregister", counterKeys: { _ in [] }, ["POST": AdminEndpoints.unregister]),
        Route("/_admin/device", counterKeys: { _ in [] }, ["POST": AdminEndpoints.device]),
        Route("/_admin/client-metadata", counterKeys: { _ in [] }, ["POST": AdminEndpoints.clientMetadata]),
        Route("/_admin/client", counterKeys: { _ in [] }, ["POST": ClientPolicies.admin]),
    ]

    static let adminPrefix = "/_admin/"
}

/// Turns a request into an outcome: admin requests go straight to their
/// handler; every other request is counted, gets any pending fault, then is routed.
struct IssuerRouter: Sendable {
    let state: IssuerState
    let issuer: String
    /// Seconds since 1970: the issuer's clock (`DevIssuer.init`'s `now`).
    let now: @Sendable () -> Double

    /// Blocks this connection's thread for the injected latency, through signals.
    static func sleep(milliseconds: Int) {
        var remaining = timespec(tv_sec: milliseconds / 1000, tv_nsec: milliseconds % 1000 * 1_000_000)
        var request = remaining
        while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    }

    func handle(_ request: HTTPRequest) -> HTTPServer.Outcome {
        let path = request.path
        if path.hasPrefix(IssuerRoutes.adminPrefix) {
            return .respond(dispatch(request, to: IssuerRoutes.admin.first { $0.path == path }))
        }
        let route = IssuerRoutes.public.first { $0.path == path }
            ?? IssuerRoutes.public.first { $0.path.hasSuffix("/") && path.hasPrefix($0.path) && path.count > $0.path.count }
        let decision = state.admit(countingAs: route?.counterKeys(request) ?? [])
        if decision.latencyMilliseconds > 0 {
            Self.sleep(milliseconds: decision.latencyMilliseconds)
        }
        switch decision.action {
        case .drop:
            return .drop
        case .fail(let status):
            return .respond(.json(status, ["error": "injected_fault", "status": .int(Int64(status))]))
        case .answer(let status, let body):
            return .respond(HTTPResponse(status: status, headers: body.isEmpty ? [] : [("Content-Type", "application/json")], body: body))
        case .none:
            return .respond(dispatch(request, to: route))
        }
    }

    private func dispatch(_ request: HTTPRequest, to route: Route?) -> HTTPResponse {
        guard let route else { return .error(404, "not_found", "no such endpoint: \(request.path)") }
        guard let handler = route.handlers[request.method] else {
            let allowed = route.handlers.keys.sorted().joined(separator: ", ")
            return .error(405, "method_not_allowed", "\(request.method) is not allowed here", headers: [("Allow", allowed)])
        }
        let context = RouteContext(state: state, issuer: issuer, now: now())
        return handler(request, context)
    }
}
