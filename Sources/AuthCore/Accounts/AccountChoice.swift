/// Which account a request means: the one it names, else the one its connection
/// selected for the provider (`selectAccount`), else the provider's default.
public struct AccountChoice: Sendable, Equatable {
    public var account: String?
    /// The connection's selections, by provider.
    public var selected: [String: String]

    public init(account: String? = nil, selected: [String: String] = [:]) {
        self.account = account
        self.selected = selected
    }

    func name(for provider: String) -> String? { account ?? selected[provider] }
}
