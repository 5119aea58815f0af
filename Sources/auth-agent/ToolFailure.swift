import AuthCore

/// Why a one-shot subcommand stops, and the exit code that tells a script what to do next:
/// 1 the operation failed, 2 fix the command line or configuration, 3 retry later.
struct ToolFailure: Error, Equatable {
    enum Code: Int32, Equatable {
        case failed = 1, usage = 2, unavailable = 3
        /// `fetch` got an HTTP status of 400 or more: curl's `--fail` convention.
        case httpError = 22
        /// Ctrl-C: the shell's convention (128 + SIGINT), so scripts see an interruption, not a failure.
        case interrupted = 130
    }

    let code: Code
    /// One line for stderr, without secrets; `reason` first when the protocol has one.
    let message: String
    /// The protocol error behind the failure, if any, for callers that treat some differently.
    let authCode: AuthErrorCode?
    /// The provider the protocol error is about, for the hint that names it.
    let provider: String?

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
        authCode = nil
        provider = nil
    }

    /// No session to use: the user has to log in (again).
    var needsLogin: Bool { authCode == .notLoggedIn || authCode == .sessionExpired }

    /// The protocol error's reason on stderr, and its exit code by error number: the auth server
    /// (1005) or the store (1010) unavailable → 3, an unknown provider or a configuration mistake
    /// (1016, with the command that fixes it) → 2, anything else → 1.
    /// Matched on the number so a code added to `AuthErrorCode` later maps without touching this.
    init(_ error: AuthError) {
        switch error.code.rawValue {
        case 1005, 1010: code = .unavailable
        case AuthErrorCode.unknownProvider.rawValue, AuthErrorCode.configurationInvalid.rawValue: code = .usage
        default: code = .failed
        }
        // A configuration mistake says the command that fixes it.
        let fix = error.configKey.flatMap { key in error.provider.map { " To fix it: auth-agent config set \($0) \(key) …" } } ?? ""
        message = "\(error.code.reason): \(error.message)" + fix
        authCode = error.code
        provider = error.provider
    }
}
