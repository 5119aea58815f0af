#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import JSONRPC

// The process entry point: parse the command line, wire the layers, serve.
let arguments: Arguments
do {
    arguments = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    Logger.stderrSink("auth-agent: \(error)\nRun 'auth-agent --help' for usage.")
    exit(2)
}

switch arguments.command {
case .help:
    print(Arguments.usage)
case .version:
    print("auth-agent \(Arguments.version)")
case .serve, .demo, .connect:
    // Before the store watch and the demo's issuer start threads: see `holdTerminationSignals`.
    StdioServer.holdTerminationSignals()
    Agent.run(arguments)
case .devIssuer:
    Agent.run(arguments)
case .tool(let command):
    Tool.run(command)
}
