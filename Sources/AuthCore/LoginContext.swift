import JSON

/// What an interactive login needs from the request that started it: who to
/// show the prompt to, and whether to open a browser.
public struct LoginContext: Sendable {
    /// The id of the `login` request, echoed in `loginPrompt` so the host can match (and cancel) it.
    public var requestId: JSONValue
    /// `login`'s `openBrowser` param; nil defers to the provider's configuration.
    public var openBrowser: Bool?
    /// Sends `loginPrompt` params to the host that asked, subscribed or not.
    public var prompt: @Sendable (JSONValue) -> Void

    public init(requestId: JSONValue = .null, openBrowser: Bool? = nil, prompt: @escaping @Sendable (JSONValue) -> Void = { _ in }) {
        self.requestId = requestId
        self.openBrowser = openBrowser
        self.prompt = prompt
    }
}
