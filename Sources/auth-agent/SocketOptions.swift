/// `serve --socket [PATH] [--daemon] [--forward-socket PATH2 --forward-providers a,b]`.
struct SocketOptions: Equatable {
    /// Nil: the default path (`UnixSocket.defaultPath`).
    var path: String?
    var daemon = false
    /// A second socket, meant for `ssh -R`, on which only `forwardProviders` exist.
    var forwardPath: String?
    var forwardProviders: [String] = []
}

extension Arguments {
    /// The socket options belong to `serve` and to each other; a combination that would be
    /// silently ignored is a usage error instead.
    mutating func checkSocketOptions(daemon: Bool, forwardPath: String?, forwardProviders: [String]?) throws {
        let serving = command == .serve
        if stop {
            guard serving, socket == nil, !daemon, forwardPath == nil, forwardProviders == nil else {
                throw UsageError(description: "--stop takes no other socket option")
            }
            return
        }
        guard socket != nil else {
            if daemon { throw UsageError(description: "--daemon needs --socket") }
            if forwardPath != nil || forwardProviders != nil { throw UsageError(description: "--forward-socket and --forward-providers need --socket") }
            return
        }
        if command == .connect {
            guard !daemon, forwardPath == nil, forwardProviders == nil else { throw UsageError(description: "'connect' takes only --socket PATH") }
            return
        }
        guard serving else { throw UsageError(description: "--socket belongs to 'serve' and 'connect'") }
        socket!.daemon = daemon
        switch (forwardPath, forwardProviders) {
        case (nil, nil): break
        case (let path?, let providers?):
            socket!.forwardPath = path
            socket!.forwardProviders = providers
        case (nil, _): throw UsageError(description: "--forward-providers needs --forward-socket")
        case (_, nil): throw UsageError(description: "--forward-socket needs --forward-providers (the providers it may serve)")
        }
    }
}
