import Wire

/// Device authorization requests (RFC 8628) and their polling rules, as a plain
/// table that `IssuerState` keeps behind its lock.
///
/// Each device code has its own interval, starting at the issuer's current one
/// and growing by 5 s with every `slow_down` (RFC 8628 §3.5), so a client that
/// does not back off keeps getting `slow_down`.
struct DeviceAuthorizations {
    enum Status {
        case pending
        case approved(username: String)
        case denied
        /// Tokens were issued; the device code is spent.
        case redeemed
    }

    struct Record {
        let clientID: String
        let userCode: String
        let scope: String?
        var expiresAt: Double
        var interval: Int
        var lastPoll: Double? = nil
        var status: Status = .pending
    }

    /// What one poll of the token endpoint gets (before any tokens are minted).
    enum Poll {
        case pending
        case slowDown
        case denied
        case expired
        case approved(username: String, scope: String?)
        case invalid(String)
    }

    /// A poll this much earlier than the interval still counts as on time, so a
    /// client that sleeps exactly `interval` seconds is never flagged by clock granularity.
    static let pollTolerance = 0.1
    /// RFC 8628 §3.5: how much `slow_down` adds to the interval.
    static let slowDownIncrement = 5

    private var records: [String: Record] = [:]
    private var deviceCodeByUserCode: [String: String] = [:]
    /// Polls still to be answered `slow_down` whatever their timing (fault injection).
    var forcedSlowDowns = 0

    /// Registers a new request and returns its `(deviceCode, userCode)`.
    mutating func start(clientID: String, scope: String?, lifetime: Int, interval: Int, now: Double) -> (deviceCode: String, userCode: String) {
        var userCode = UserCode.generate()
        while deviceCodeByUserCode[userCode] != nil { userCode = UserCode.generate() }
        let deviceCode = SecureRandom.token(bytes: 32)
        records[deviceCode] = Record(clientID: clientID, userCode: userCode, scope: scope,
                                     expiresAt: now + Double(lifetime), interval: max(0, interval))
        deviceCodeByUserCode[userCode] = deviceCode
        return (deviceCode, userCode)
    }

    /// One token-endpoint poll by `clientID`; records the poll time and applies the slow-down rules.
    mutating func poll(deviceCode: String, clientID: String, now: Double) -> Poll {
        guard var record = records[deviceCode] else { return .invalid("unknown device_code") }
        defer { records[deviceCode] = record }
        guard record.clientID == clientID else { return .invalid("the device code was issued to another client") }
        if case .redeemed = record.status { return .invalid("the device code was already used") }
        guard now < record.expiresAt else { return .expired }
        let early = record.lastPoll.map { now - $0 < Double(record.interval) - Self.pollTolerance } ?? false
        record.lastPoll = now
        if forcedSlowDowns > 0 || early {
            forcedSlowDowns = max(0, forcedSlowDowns - 1)
            record.interval += Self.slowDownIncrement
            return .slowDown
        }
        switch record.status {
        case .pending: return .pending
        case .denied: return .denied
        case .redeemed: return .invalid("the device code was already used")
        case .approved(let username):
            record.status = .redeemed
            return .approved(username: username, scope: record.scope)
        }
    }

    /// The pending, unexpired request behind what a person entered as a user code.
    func pending(userCode entered: String, now: Double) -> Record? {
        guard let userCode = UserCode.normalize(entered), let deviceCode = deviceCodeByUserCode[userCode],
              let record = records[deviceCode], now < record.expiresAt, case .pending = record.status else { return nil }
        return record
    }

    /// Approves (for `username`) or denies (`nil`) a pending request; `false` when
    /// the user code is unknown, expired or already decided.
    mutating func decide(userCode entered: String, approvingFor username: String?, now: Double) -> Bool {
        guard pending(userCode: entered, now: now) != nil, let userCode = UserCode.normalize(entered),
              let deviceCode = deviceCodeByUserCode[userCode] else { return false }
        records[deviceCode]?.status = username.map { .approved(username: $0) } ?? .denied
        return true
    }

    /// Makes every request issued so far expired, so the next poll gets `expired_token`.
    mutating func expireAll() {
        for key in records.keys { records[key]?.expiresAt = -.infinity }
    }
}
