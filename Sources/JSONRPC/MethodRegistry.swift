/// Every method the agent answers, each with its descriptor and handler.
///
/// Registering a name twice is a programming error and traps, so a method can
/// only ever be declared once.
public struct MethodRegistry: Sendable {
    public struct Entry: Sendable {
        public let descriptor: MethodDescriptor
        /// Where a call stands against earlier calls, from its params.
        public let ordering: @Sendable (RPCParams) -> RequestOrdering
        /// Whether this connection's door may make the call, from its params: nil, or the
        /// error it is answered with before it is ordered or run.
        public let access: @Sendable (RPCParams) -> RPCError?
        public let handler: RPCHandler
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []
    /// By the method name's bytes: a plain request's method is compared without making a `String`.
    private var shortcuts: [(method: [UInt8], run: RPCShortcut)] = []

    public init() {}

    public mutating func register(_ descriptor: MethodDescriptor, ordering: @escaping @Sendable (RPCParams) -> RequestOrdering = { _ in .free },
                                  access: @escaping @Sendable (RPCParams) -> RPCError? = { _ in nil }, _ handler: @escaping RPCHandler) {
        precondition(entries[descriptor.name] == nil, "method \(descriptor.name) registered twice")
        entries[descriptor.name] = Entry(descriptor: descriptor, ordering: ordering, access: access, handler: handler)
        order.append(descriptor.name)
    }

    public func entry(_ name: String) -> Entry? { entries[name] }

    /// Adds a faster way to some of a registered method's answers (see `RPCShortcut`).
    public mutating func registerShortcut(_ method: String, _ shortcut: @escaping RPCShortcut) {
        precondition(entries[method] != nil, "a shortcut for \(method), which is not registered")
        precondition(!shortcuts.contains { $0.method == Array(method.utf8) }, "a second shortcut for \(method)")
        shortcuts.append((Array(method.utf8), shortcut))
    }

    func shortcut(_ method: PlainString) -> RPCShortcut? {
        shortcuts.first { $0.method.elementsEqual(method.bytes) }?.run
    }

    /// Descriptors in registration order.
    public var descriptors: [MethodDescriptor] { order.map { entries[$0]!.descriptor } }
}
