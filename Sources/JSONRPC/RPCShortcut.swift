import JSON

/// A method's plainest requests answered straight from the line's bytes: the
/// per-message hot path for a method a host calls many times a second (`sign`).
///
/// It gets the request's params as a `PlainObject` and answers with the result
/// serialized, or nil when it is not sure — params it does not read, an answer
/// that must wait — and then the general path takes the request as if the
/// shortcut did not exist. It throws to answer with an error. It runs on the
/// reader thread and must not wait; it must answer exactly what the method's
/// handler would, and only when `ShortcutCall.runsAtOnce` says its ordering
/// lets it run now.
public typealias RPCShortcut = @Sendable (PlainObject, ShortcutCall) throws(RPCError) -> JSONText?

/// What a shortcut sees of its request besides the params.
public struct ShortcutCall {
    public let id: JSONValue
    /// The connection the request came on, and the state a host keeps there.
    public let connection: RPCConnection
    let scheduler: RequestScheduler

    /// Whether a request ordered so would run at once: what the general path's
    /// admission decides, asked without admitting anything. A shortcut that gets
    /// false leaves the request to the general path, which makes it wait.
    public func runsAtOnce(_ ordering: RequestOrdering) -> Bool { scheduler.runsAtOnce(ordering) }
}

/// A request in `PlainObject`'s subset: `jsonrpc` "2.0", an integer or string
/// `id`, a `method` and perhaps a `params` object, in any order, and nothing
/// else. A notification or a null id is left to the general path.
struct PlainRequest<Target> {
    let id: JSONValue
    let method: PlainString
    let params: PlainObject?
    /// What `find` found for the method.
    let target: Target

    /// - Parameter find: what answers `method`, if the caller has anything; a line
    ///   for another method is given up as soon as its method is read (most lines are not `sign`s).
    init?(line: UnsafeBufferPointer<UInt8>, find: (PlainString) -> Target?) {
        var version = false
        var id: JSONValue?
        var method: PlainString?
        var target: Target?
        var params: PlainObject?
        let plain = PlainObject(line: line).forEachMember { key, value in
            switch value {
            case .string(let s) where key.is("jsonrpc"):
                version = s.is("2.0")
                return version
            case .string(let s) where key.is("id"): id = .string(s.string)
            case .int(let n) where key.is("id"): id = .int(n)
            case .string(let s) where key.is("method"):
                method = s
                target = find(s)
                return target != nil
            case .object(let o) where key.is("params"): params = o
            default: return false
            }
            return true
        }
        guard plain, version, let id, let method, let target else { return nil }
        self.id = id
        self.method = method
        self.params = params
        self.target = target
    }
}
