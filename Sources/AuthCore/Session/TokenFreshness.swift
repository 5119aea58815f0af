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

/// How usable a session's access token is at a moment — the three states
/// Google's auth libraries call FRESH, STALE and EXPIRED.
public enum TokenFreshness: Sendable, Equatable {
    /// Use it; nothing to do.
    case fresh
    /// Use it, and refresh it in the background: callers never wait for that refresh.
    case stale
    /// Expired, or so close to it (within the minimum validity margin) that a
    /// caller must wait for a new token before using it.
    case expired
}

/// What the timing rules need to know of a token: when it was obtained and when it expires.
public protocol TokenLifetime {
    var obtainedAt: Date { get }
    var expiresAt: Date? { get }
}

extension Session: TokenLifetime {}

/// When a token is refreshed, written once as a pure rule.
///
/// The configured refresh window is bounded by half the token's lifetime: a
/// token that lives 60 s with a 60 s window would otherwise be stale from birth
/// and refreshed on every call (and then hit the excessive-refresh limit while
/// valid for another minute). The wait margin is bounded by half that window, so
/// a short-lived token still gets a stale phase in which nobody waits.
public struct RefreshTiming: Sendable, Equatable {
    /// `refreshWindowSeconds`: refresh this long before expiry, in the background.
    public var window: TimeInterval
    /// `minValiditySeconds`: a token with less validity left than this makes callers wait.
    public var minValidity: TimeInterval

    public init(window: TimeInterval, minValidity: TimeInterval) {
        self.window = window
        self.minValidity = minValidity
    }

    /// The window that applies to `session`: the configured one, at most half its lifetime.
    public func effectiveWindow(_ session: some TokenLifetime) -> TimeInterval {
        guard let expiresAt = session.expiresAt else { return 0 }
        let lifetime = max(0, expiresAt.timeIntervalSince(session.obtainedAt))
        return min(window, lifetime / 2)
    }

    public func freshness(of session: some TokenLifetime, at now: Date) -> TokenFreshness {
        guard let expiresAt = session.expiresAt else { return .fresh }  // no known expiry: used until a 401
        let left = expiresAt.timeIntervalSince(now)
        let window = effectiveWindow(session)
        if left <= 0 || left <= min(minValidity, window / 2) { return .expired }
        return left <= window ? .stale : .fresh
    }

    /// Whether the token can still be sent at all (a failed refresh falls back to it).
    public static func isValid(_ session: some TokenLifetime, at now: Date) -> Bool {
        guard let expiresAt = session.expiresAt else { return true }
        return expiresAt > now
    }

    /// What a request does with `token` (nil: none of its shape yet) at `now` — the one
    /// freshness decision. A fresh token is used; a stale one is used while a refresh runs
    /// in the background; an expired or missing one makes the caller wait for a new one.
    /// A token that cannot be refreshed (`refreshable`, asked only when it matters) is
    /// used as long as it is valid at all: waiting could not get a better one.
    public func decision(for token: (some TokenLifetime)?, refreshable: @autoclosure () -> Bool, at now: Date) -> CredentialDecision {
        guard let token else { return .wait }
        switch freshness(of: token, at: now) {
        case .fresh: return .use
        case .stale: return refreshable() ? .useAndRefreshInBackground : .use
        case .expired: return !refreshable() && Self.isValid(token, at: now) ? .use : .wait
        }
    }
}

/// `RefreshTiming.decision`'s answer.
public enum CredentialDecision: Sendable, Equatable {
    case use
    /// Use it, and refresh it in the background: callers never wait for that refresh.
    case useAndRefreshInBackground
    /// Obtain a new token first.
    case wait
}

/// When to try a failed background refresh again: exponential from 1 s, capped
/// at 60 s, with jitter (half to all of the step) so that several agents on one
/// store do not retry in lock step.
public struct RefreshBackoff: Sendable, Equatable {
    public private(set) var failures = 0
    public private(set) var notBefore: Date?

    public init() {}

    /// Whether a background refresh may start now.
    public func allows(at now: Date) -> Bool { notBefore.map { now >= $0 } ?? true }

    /// Records a failure; `unit` in 0...1 is the jitter draw (injectable for tests).
    public mutating func failed(at now: Date, unit: Double = Double.random(in: 0...1)) {
        failures += 1
        let step = min(60, pow(2, Double(failures - 1)))
        notBefore = now.addingTimeInterval(step * (0.5 + 0.5 * unit))
    }

    public mutating func succeeded() { self = RefreshBackoff() }
}
