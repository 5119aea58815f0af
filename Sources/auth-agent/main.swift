#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import JSONRPC
import Logging

// The process entry point: parse the command line, wire the layers, serve.
ProcessEnvironment.freeze()
let arguments: Arguments
do {
    arguments = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    Logger.stderrSink("auth-agent: \(error)\nRun 'auth-agent --help' for usage.")
    exit(2)
}

switch arguments.command {
case .help(let topic, let man):
    // `help --man` documents everything; `help COMMAND --man` is the same page.
    print(man ? CommandHelp.manPage : topic.flatMap(CommandHelp.usage(of:)) ?? CommandHelp.usage, terminator: "")
case .version:
    print("auth-agent \(Arguments.version)")
case .completion(let shell):
    print(Completion.script(shell) ?? "", terminator: "")
case .completeProviders(let learnedOnly):
    Completion.printProviders(configPath: arguments.configPath, learnedOnly: learnedOnly)
case .serve, .demo, .connect:
    // Before the store watch and the demo's issuer start threads: see `holdTerminationSignals`.
    StdioServer.holdTerminationSignals()
    Agent.run(arguments)
case .devIssuer:
    Agent.run(arguments)
case .mcp(let options):
    McpCommand.run(options)
case .tool(let command):
    Tool.run(command)
}
