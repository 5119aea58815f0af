/// `serve --socket [PATH] [--daemon] [--max-connections N] [--forward-socket PATH2 --forward-providers a,b
/// [--forward-max-connections N]]`.
struct SocketOptions: Equatable {
    /// Nil: the default path (`UnixSocket.defaultPath`).
    var path: String?
    var daemon = false
    /// Connections served at once on the socket; more are closed at once (`SocketServer`).
    var maxConnections = 512
    /// A second socket, meant for `ssh -R`, on which only `forwardProviders` exist.
    var forwardPath: String?
    var forwardProviders: [String] = []
    /// The forward socket's cap: lower, because whoever reaches the remote end can open them.
    var forwardMaxConnections = 64

    /// The caps' bounds on the command line.
    static let connectionRange = 1...65_536
}

/// What `serve --socket` is given on its command line besides the path, checked together.
struct SocketFlags {
    var daemon = false
    var forwardPath: String?
    var forwardProviders: [String]?
    var maxConnections: Int?
    var forwardMaxConnections: Int?

    /// A cap's value: a whole number in `SocketOptions.connectionRange`.
    static func connections(_ flag: String, _ value: String) throws -> Int {
        guard let n = Int(value), SocketOptions.connectionRange.contains(n) else {
            throw Arguments.UsageError(description: "\(flag) must be a whole number from 1 to 65536, got '\(value)'")
        }
        return n
    }
}

extension Arguments {
    /// The socket options belong to `serve` and to each other; a combination that would be
    /// silently ignored is a usage error instead.
    mutating func checkSocketOptions(_ flags: SocketFlags) throws {
        let serving = command == .serve
        let daemon = flags.daemon
        let (forwardPath, forwardProviders) = (flags.forwardPath, flags.forwardProviders)
        let capped = flags.maxConnections != nil || flags.forwardMaxConnections != nil
        if stop {
            guard serving, socket == nil, !daemon, forwardPath == nil, forwardProviders == nil, !capped else {
                throw UsageError(description: "--stop takes no other socket option")
            }
            return
        }
        guard socket != nil else {
            if daemon { throw UsageError(description: "--daemon needs --socket") }
            if forwardPath != nil || forwardProviders != nil { throw UsageError(description: "--forward-socket and --forward-providers need --socket") }
            if capped { throw UsageError(description: "--max-connections and --forward-max-connections need --socket") }
            return
        }
        if command == .connect {
            guard !daemon, forwardPath == nil, forwardProviders == nil, !capped else { throw UsageError(description: "'connect' takes only --socket PATH") }
            return
        }
        guard serving else { throw UsageError(description: "--socket belongs to 'serve' and 'connect'") }
        socket!.daemon = daemon
        if let n = flags.maxConnections { socket!.maxConnections = n }
        switch (forwardPath, forwardProviders) {
        case (nil, nil):
            if flags.forwardMaxConnections != nil { throw UsageError(description: "--forward-max-connections needs --forward-socket") }
        case (let path?, let providers?):
            socket!.forwardPath = path
            socket!.forwardProviders = providers
            if let n = flags.forwardMaxConnections { socket!.forwardMaxConnections = n }
        case (nil, _): throw UsageError(description: "--forward-providers needs --forward-socket")
        case (_, nil): throw UsageError(description: "--forward-socket needs --forward-providers (the providers it may serve)")
        }
    }
}
