#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSON
import JSONRPC

/// Wires the engine, the auth core and stdio together.
enum Agent {
    static func run(_ arguments: Arguments) -> Never {
        let logger = Logger(level: arguments.logLevel)
        let output = OutputSink(fileDescriptor: 1, onClosed: { exit(0) })
        var options = RPCConnection.Options()
        options.serverVersion = Arguments.version
        let registry = MethodRegistry()
        let connection = RPCConnection(registry: registry, output: output, logger: logger, options: options,
                                       onExit: { code in exit(code) })
        StdioServer.run(connection, maxLineBytes: arguments.maxMessageBytes)
    }
}
