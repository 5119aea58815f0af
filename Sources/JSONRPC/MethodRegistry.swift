/// Every method the agent answers, each with its descriptor and handler.
///
/// Registering a name twice is a programming error and traps, so a method can
/// only ever be declared once.
public struct MethodRegistry: Sendable {
    public struct Entry: Sendable {
        public let descriptor: MethodDescriptor
        /// Where a call stands against earlier calls, from its params.
        public let ordering: @Sendable (RPCParams) -> RequestOrdering
        public let handler: RPCHandler
    }

    private var entries: [String: Entry] = [:]
    private var order: [String] = []

    public init() {}

    public mutating func register(_ descriptor: MethodDescriptor, ordering: @escaping @Sendable (RPCParams) -> RequestOrdering = { _ in .free },
                                  _ handler: @escaping RPCHandler) {
        precondition(entries[descriptor.name] == nil, "method \(descriptor.name) registered twice")
        entries[descriptor.name] = Entry(descriptor: descriptor, ordering: ordering, handler: handler)
        order.append(descriptor.name)
    }

    public func entry(_ name: String) -> Entry? { entries[name] }

    /// Descriptors in registration order.
    public var descriptors: [MethodDescriptor] { order.map { entries[$0]!.descriptor } }
}
