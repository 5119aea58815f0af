// swift-tools-version:6.0
// auth-agent: a process that any host spawns to delegate authentication,
// spoken to over stdin/stdout with JSON-RPC 2.0. No package dependencies, by design.
import PackageDescription

// Concrete types' metadata through direct accessors, not looked up by mangled name at run time:
// demangling those names (and the conformance scans their generic requirements need) was half of
// a one-shot helper's own start-up in a profile of the static build.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6),
                              .unsafeFlags(["-Xfrontend", "-disable-concrete-type-metadata-mangled-name-accessors"])]

let package = Package(
    name: "auth-agent",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "auth-agent", targets: ["auth-agent"]),
        .executable(name: "auth-agent-bench", targets: ["auth-agent-bench"]),
        .executable(name: "auth-agent-empty", targets: ["auth-agent-empty"]),
        .library(name: "JSONRPC", targets: ["JSONRPC"]),
        .library(name: "AuthCore", targets: ["AuthCore"]),
        .library(name: "Digest", targets: ["Digest"]),
    ],
    targets: [
        // JSON values, a strict RFC 8259 parser over bytes and a deterministic serializer.
        .target(name: "JSON", swiftSettings: strict),
        // The one lock and plain threads, over pthreads, so no module needs Foundation's NSLock or Thread.
        .target(name: "Locking", swiftSettings: strict),
        // SHA-256 written from FIPS 180-4 (CryptoKit where it exists), for PKCE.
        .target(name: "Digest", swiftSettings: strict),
        // What both ends of a loopback OAuth exchange share: base64url, form encoding, HTML escaping,
        // secure random tokens, POSIX loopback sockets. Used by AuthCore and DevIssuer.
        .target(name: "Wire", swiftSettings: strict),
        // Leveled logging to stderr: what the engine, the auth core and the executable all log through.
        .target(name: "Logging", dependencies: ["Locking"], swiftSettings: strict),
        // The JSON-RPC 2.0 engine: framing, dispatch, lifecycle, cancellation, its transports. Knows nothing of auth.
        .target(name: "JSONRPC", dependencies: ["JSON", "Locking", "Logging"], swiftSettings: strict),
        // Providers, sessions, refresh, signing, the store and events. Knows nothing of stdio.
        // libcurl loaded with dlopen on the first request (Linux), so start-up does not map it.
        .target(name: "CurlShim", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // libsecret (the freedesktop Secret Service) loaded with dlopen when a keyring store is used (Linux).
        .target(name: "SecretShim", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // libcrypto (OpenSSL) loaded with dlopen on the first ES256 key, for DPoP (Linux; CryptoKit on Apple platforms).
        .target(name: "CryptoShim", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // P-256 keys, ES256 signatures and RFC 7638 thumbprints over CryptoShim or CryptoKit: DPoP proofs and their checks.
        .target(name: "ES256", dependencies: ["Digest", "Wire", "Locking", .target(name: "CryptoShim", condition: .when(platforms: [.linux]))],
                swiftSettings: strict),
        .target(name: "AuthCore", dependencies: ["JSON", "JSONRPC", "Logging", "Locking", "Digest", "Wire", "ES256", .target(name: "CurlShim", condition: .when(platforms: [.linux])),
                                                 .target(name: "SecretShim", condition: .when(platforms: [.linux]))],
                swiftSettings: strict),
        // A loopback-only OAuth 2.0 / session-API issuer for the demo and the tests.
        .target(name: "DevIssuer", dependencies: ["JSON", "Locking", "Digest", "Wire", "ES256"], swiftSettings: strict),
        // The thin executable that wires the layers to stdin/stdout.
        .executableTarget(name: "auth-agent", dependencies: ["JSONRPC", "Logging", "AuthCore", "DevIssuer"], swiftSettings: strict,
                          linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(platforms: [.linux]))]),
        // Drives the built agent over pipes beside an echo baseline; prints ratios.
        // Peers/: scripts that assemble the programs it compares the bridge with (not Swift).
        .executableTarget(name: "auth-agent-bench", dependencies: ["AuthCore"], exclude: ["Peers"], swiftSettings: strict),
        // The bench's start-up baseline: an empty Foundation program that answers each line with `{}`.
        .executableTarget(name: "auth-agent-empty", swiftSettings: strict),
        // What several test targets use: a slow local client for the browser-login listener, the fake and virtual clocks,
        // a scripted OAuth server, the agent wired in-process (the in-process transcripts).
        .target(name: "TestSupport", dependencies: ["AuthCore", "JSONRPC", "Logging", "JSON", "Locking"], path: "Tests/TestSupport", swiftSettings: strict),
        .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: strict),
        .testTarget(name: "DigestTests", dependencies: ["Digest"], swiftSettings: strict),
        .testTarget(name: "WireTests", dependencies: ["Wire"], swiftSettings: strict),
        .testTarget(name: "LockingTests", dependencies: ["Locking"], swiftSettings: strict),
        .testTarget(name: "JSONRPCTests", dependencies: ["JSONRPC", "Logging", "Locking", "JSON"], swiftSettings: strict),
        .testTarget(name: "AuthCoreTests", dependencies: ["AuthCore", "JSONRPC", "Logging", "JSON", "Wire", "ES256", "Digest", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "DevIssuerTests", dependencies: ["DevIssuer", "JSON", "ES256", "Wire", "Digest"], swiftSettings: strict),
        // Golden transcripts (most in-process, those about the process against the built binary), schema checks and fuzzing.
        .testTarget(name: "AgentTests", dependencies: ["TestSupport", "JSON", "JSONRPC", "Logging", "Locking", "AuthCore", "DevIssuer", "ES256", "Wire", "Digest", "auth-agent"], swiftSettings: strict),
    ]
)
