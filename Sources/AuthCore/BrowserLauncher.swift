#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// Opens a URL in the user's browser (`xdg-open`, or `open` on macOS), only
/// when a login asks for it. The child gets /dev/null for stdin, stdout and
/// stderr: the agent's stdout is the protocol channel and must stay clean.
struct BrowserLauncher: Sendable {
    var command: String = {
        #if os(macOS)
        return "open"
        #else
        return "xdg-open"
        #endif
    }()

    func open(_ url: String) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup(command), strdup(url), nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawnp(&pid, command, &actions, nil, argv, environ) == 0 else { return }
        // Reap it so no zombie is left behind; the agent never waits on the browser.
        let child = pid
        DispatchQueue.global().async {
            var status: Int32 = 0
            _ = waitpid(child, &status, 0)
        }
    }
}
