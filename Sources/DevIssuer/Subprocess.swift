#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Locking

/// A program run to its end with some bytes on its stdin and its stdout collected (stderr
/// discarded): git's plumbing and `git http-backend` for the demo repository.
enum Subprocess {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `argv` (found on PATH) with `environment` added to this process's; the input is
    /// written from a thread of its own, so a program that answers before reading all of it
    /// (a CGI streaming a pack) never blocks on a full pipe.
    static func run(_ argv: [String], input: [UInt8] = [], environment: [String: String] = [:]) throws(Failure) -> (status: Int32, output: [UInt8]) {
        var toChild: [Int32] = [0, 0], fromChild: [Int32] = [0, 0]
        guard pipe(&toChild) == 0 else { throw Failure(description: "cannot make a pipe") }
        guard pipe(&fromChild) == 0 else {
            close(toChild[0]); close(toChild[1])
            throw Failure(description: "cannot make a pipe")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        var inherited: [String] = []
        var index = 0
        while let entry = environ[index] {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "="), environment[String(text[..<eq])] == nil { inherited.append(text) }
            index += 1
        }
        let env: [UnsafeMutablePointer<CChar>?] = (inherited + environment.map { "\($0)=\($1)" }).map { strdup($0) } + [nil]
        let args: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        defer { (env + args).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, argv[0], &actions, nil, args, env)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw Failure(description: "cannot run \(argv[0]): \(String(cString: strerror(spawned)))")
        }
        let writer = toChild[1]
        let written = ThreadWait()
        let finished = Locked(false)
        let sendsInput = DetachedThread.start {
            var offset = 0
            while offset < input.count {
                let n = input[offset...].withUnsafeBytes { write(writer, $0.baseAddress!, $0.count) }
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { break }
                offset += n
            }
            close(writer)
            finished.withLock { $0 = true }
            written.wake()
        }
        if !sendsInput { close(writer) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fromChild[0], $0.baseAddress!, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            output += chunk[..<n]
        }
        close(fromChild[0])
        if sendsInput { _ = written.wait(timeout: 30) { finished.current ? () : nil } }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return ((status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F), output)
    }
}
