import Foundation

// The start-up baseline of auth-agent-bench: an empty Foundation program that
// does the least a line protocol needs — answers each line of stdin with `{}`
// until end of input — through Foundation's own FileHandle, so that Foundation
// is linked, loaded and initialised as in any program that uses it. Built with
// the same flags as the agent, so a static build compares static with static.
let answer = Data("{}\n".utf8)
while case let chunk = FileHandle.standardInput.availableData, !chunk.isEmpty {
    for byte in chunk where byte == 0x0A { FileHandle.standardOutput.write(answer) }
}
