import JSON

/// `/_admin/…`: fault injection and counters over HTTP, for test suites in
/// other languages and the `dev-issuer` CLI. Not counted and never faulted, so
/// a test can always observe and reset the issuer.
enum AdminEndpoints {
    /// `GET /_admin/stats` → `{"counts":{endpoint: n}}`.
    static func stats(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        .json(200, ["counts": sorted(context.state.counts)])
    }

    /// `GET /_admin/grants` → `{"grants":{name: n}}`: tokens issued per subject and shape
    /// (`GrantCounter` names such as `refresh_token:alice:resource=https://api.example.com`).
    static func grants(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        .json(200, ["grants": sorted(context.state.grantCounts)])
    }

    private static func sorted(_ counts: [String: Int]) -> JSONValue {
        var object = JSONObject()
        for (key, value) in counts.sorted(by: { $0.key < $1.key }) {
            object[key] = .int(Int64(value))
        }
        return .object(object)
    }

    /// `POST /_admin/fault` with any of `latencyMs`, `fail` (+ `status`), `drop`, `rejectApi`,
    /// `revokeAll`, `accessTokenLifetime`, `slowDown`, `deviceInterval`,
    /// `expireDevices`, `autoApprove` (a username, or null for off), `requireNonce`,
    /// `verificationUri` (a string, or null for the real page), `discovery` (a `DiscoveryFault`
    /// name or an array of them to turn on, null to turn all off), and for DPoP `dpopNonce`
    /// (mandatory nonces on or off), `dpopRotateNonce`, `dpopBearer` (the next N proven
    /// token requests get Bearer tokens) and `dpopRefuse` (the next N proofs are refused), and for PAR
    /// `parLifetime` (seconds a pushed request's `request_uri` lives, 60 by default) → `{}`.
    /// Unknown or mistyped fields are a 400, so a typo in a test does not silently inject nothing.
    static func fault(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let body: JSONObject
        if request.body.isEmpty {
            body = [:]
        } else if let object = request.jsonBody?.objectValue {
            body = object
        } else {
            return .error(400, "invalid_request", "expected a JSON object")
        }
        let integers = ["latencyMs", "fail", "status", "drop", "rejectApi", "accessTokenLifetime", "slowDown", "deviceInterval",
                        "dpopBearer", "dpopRefuse", "parLifetime"]
        for (key, value) in body.members {
            if integers.contains(key) {
                guard let number = value.intValue, abs(number) <= Int64(Int32.max) else {
                    return .error(400, "invalid_request", "\(key) must be an integer")
                }
            } else if ["revokeAll", "expireDevices", "requireNonce", "dpopNonce", "dpopRotateNonce"].contains(key) {
                guard value.boolValue != nil else { return .error(400, "invalid_request", "\(key) must be a boolean") }
            } else if key == "discovery" {
                let names = value.arrayValue ?? (value.isNull ? [] : [value])
                guard names.allSatisfy({ $0.stringValue.flatMap(DiscoveryFault.init(rawValue:)) != nil }) else {
                    let known = DiscoveryFault.allCases.map(\.rawValue).joined(separator: ", ")
                    return .error(400, "invalid_request", "discovery must be one of \(known), an array of them, or null")
                }
            } else if key == "autoApprove" || key == "verificationUri" {
                guard value.stringValue != nil || value.isNull else {
                    return .error(400, "invalid_request", "\(key) must be a string or null")
                }
            } else {
                return .error(400, "invalid_request", "unknown field \(key)")
            }
        }
        func integer(_ key: String) -> Int? { body[key]?.intValue.map { Int($0) } }
        let status = integer("status") ?? 503
        guard (100...599).contains(status) else { return .error(400, "invalid_request", "status must be 100...599") }

        let state = context.state
        if let latency = integer("latencyMs") { state.setLatency(milliseconds: latency) }
        if let count = integer("fail") { state.failNext(count, status: status) }
        if let count = integer("drop") { state.dropNext(count) }
        if let count = integer("rejectApi") { state.rejectAPINext(count) }
        if body["revokeAll"]?.boolValue == true { state.revokeAll() }
        if let seconds = integer("accessTokenLifetime") { state.setAccessTokenLifetime(seconds) }
        if let count = integer("slowDown") { state.forceSlowDown(count) }
        if let seconds = integer("deviceInterval") { state.setDeviceInterval(seconds) }
        if body["expireDevices"]?.boolValue == true { state.expireDeviceCodes() }
        if let user = body["autoApprove"] { state.setAutoApprove(username: user.stringValue) }
        if let required = body["requireNonce"]?.boolValue { state.setRequireNonce(required) }
        if let uri = body["verificationUri"] { state.setDeviceVerificationURI(uri.stringValue) }
        if let discovery = body["discovery"] {
            if discovery.isNull { state.clearDiscoveryFaults() }
            for name in discovery.arrayValue ?? [discovery] {
                if let fault = name.stringValue.flatMap(DiscoveryFault.init(rawValue:)) { state.setDiscoveryFault(fault, on: true) }
            }
        }
        if let required = body["dpopNonce"]?.boolValue { state.dpop.setNonceRequired(required) }
        if body["dpopRotateNonce"]?.boolValue == true { state.dpop.rotateNonce() }
        if let count = integer("dpopBearer") { state.dpop.answerBearerNext(count) }
        if let count = integer("dpopRefuse") { state.dpop.refuseProofsNext(count) }
        if let seconds = integer("parLifetime") { state.clientPolicies.parLifetime = max(1, seconds) }
        return .json(200, [:])
    }

    /// `POST /_admin/device {"userCode", "action": "approve"|"deny", "username"?}` → `{}`,
    /// deciding a pending device login as the verification page would, without credentials;
    /// 404 when the code is not pending, 400 when the body is wrong.
    static func device(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let body = request.jsonBody?.objectValue else { return .error(400, "invalid_request", "expected a JSON object") }
        for key in body.keys where !["userCode", "action", "username"].contains(key) {
            return .error(400, "invalid_request", "unknown field \(key)")
        }
        guard let userCode = body["userCode"]?.stringValue else { return .error(400, "invalid_request", "userCode must be a string") }
        let decided: Bool
        switch body["action"]?.stringValue {
        case "approve":
            guard let username = body["username"]?.stringValue else {
                return .error(400, "invalid_request", "approve needs a username")
            }
            decided = context.state.decideDevice(userCode: userCode, approvingFor: username, now: context.now)
        case "deny":
            decided = context.state.decideDevice(userCode: userCode, approvingFor: nil, now: context.now)
        default:
            return .error(400, "invalid_request", "action must be approve or deny")
        }
        return decided ? .json(200, [:]) : .error(404, "not_found", "no pending device login with that user code (or no such user)")
    }

    /// `POST /_admin/client-metadata {"name", "document"}` → `{"url"}`: serves `document` at
    /// `ISSUER/clients/NAME`, a Client ID Metadata Document for tests in any language.
    static func clientMetadata(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        guard let body = request.jsonBody?.objectValue, let name = body["name"]?.stringValue, !name.isEmpty,
              !name.contains("/"), let document = body["document"]?.objectValue, body.count == 2 else {
            return .error(400, "invalid_request", "expected {\"name\": a name without /, \"document\": an object}")
        }
        context.state.publishClientMetadata(name: name, document: document)
        return .json(200, ["url": .string(context.issuer + ClientMetadataDocuments.pathPrefix + name)])
    }

    /// `POST /_admin/unregister` with `{"clientId": ID}` → `{"unregistered": [ID]}`, or `{}` for every
    /// dynamically registered client: the issuer forgets them, as a server pruning unused dynamic
    /// clients or restarting without its registrations does (their tokens are not refreshed any more).
    static func unregister(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        let body = request.body.isEmpty ? [:] : request.jsonBody?.objectValue
        guard let body, body.keys.allSatisfy({ $0 == "clientId" }), body["clientId"] == nil || body["clientId"]?.stringValue != nil else {
            return .error(400, "invalid_request", "expected {} or {\"clientId\": a registered client's id}")
        }
        let forgotten = context.state.unregisterDynamic(body["clientId"]?.stringValue)
        return .json(200, ["unregistered": .array(forgotten.map(JSONValue.string))])
    }

    /// `POST /_admin/reset`: zero the counters, clear faults and auto-approval, restore the
    /// configured token lifetime and device interval, and turn discovery faults off.
    static func reset(_ request: HTTPRequest, _ context: RouteContext) -> HTTPResponse {
        context.state.resetCounts()
        context.state.resetFaults()
        return .json(200, [:])
    }
}
