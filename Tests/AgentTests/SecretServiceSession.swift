import Foundation
import JSONRPC
import Locking
import TestSupport
import XCTest

/// A private session bus with its own GNOME Keyring (secrets component only),
/// for tests of the keyring store against the real daemon, as a desktop session
/// has — but in a temporary HOME, so the user's keyring is never touched.
///
/// Throws `XCTSkip` (with the reason) where `dbus-daemon`, `gnome-keyring-daemon`,
/// `secret-tool` or `dbus-send` are not installed.
final class SecretServiceSession {
    static let password = "test-keyring-password"
    let home: URL
    let address: String
    private let bus = Process()

    init() throws {
        for tool in ["dbus-daemon", "gnome-keyring-daemon", "secret-tool", "dbus-send"] where Self.which(tool) == nil {
            throw XCTSkip("\(tool) is not installed (Debian: gnome-keyring dbus libsecret-tools); skipping the real keyring tests")
        }
        home = try TemporaryDirectory(prefix: "auth-agent-keyring").url
        bus.executableURL = URL(fileURLWithPath: Self.which("dbus-daemon")!)
        let config = home.appendingPathComponent("bus.conf")
        try Data(Self.busConfiguration(socketDirectory: home.path).utf8).write(to: config)
        bus.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1"]
        bus.environment = Self.baseEnvironment(home: home)
        let out = Pipe()
        bus.standardOutput = out
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        address = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard address.hasPrefix("unix:") else { throw XCTSkip("dbus-daemon --session did not start") }
        try startKeyring()
    }

    deinit {
        if let pid = keyringPID { kill(pid, SIGKILL) }
        bus.terminate()
        bus.waitUntilExit()
        try? FileManager.default.removeItem(at: home)
    }

    /// A session bus without service activation: a killed keyring stays dead
    /// until the test starts one. (With activation, an agent asking in the
    /// meantime has D-Bus start a locked daemon that wins the name from the
    /// test's `--replace --unlock`; the agent answers 1010 either way.)
    private static func busConfiguration(socketDirectory: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:dir=\(socketDirectory)</listen>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """
    }

    private static func baseEnvironment(home: URL) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["HOME"] = home.path
        env["XDG_DATA_HOME"] = home.appendingPathComponent("data").path
        env["XDG_RUNTIME_DIR"] = home.path
        env["DISPLAY"] = nil
        return env
    }

    /// What an agent (or a tool) needs to use this bus and keyring.
    var environment: [String: String] {
        var env = Self.baseEnvironment(home: home)
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        return env
    }

    /// Starts an unlocked keyring, the way a login does headless:
    /// `printf pw | gnome-keyring-daemon --unlock --components=secrets`.
    func startKeyring() throws {
        let status = spawnAndWait(["/bin/sh", "-c", "printf %s \"$KEYRING_PASSWORD\" | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1"],
                                  extra: ["KEYRING_PASSWORD": Self.password])
        XCTAssertEqual(status, 0, "gnome-keyring-daemon --unlock failed")
        Self.poll { keyringPID != nil }
        guard keyringPID != nil else { throw XCTSkip("gnome-keyring-daemon did not take the Secret Service name") }
    }

    /// Asks `done` every 20 ms until it holds, for at most 5 s. (The `for _ in 0..<100 where …` this
    /// replaces evaluated its condition, one `dbus-send` each, all 100 times even once it held: 0.6 s
    /// per start or kill of the daemon.)
    private static func poll(_ done: () -> Bool) {
        let deadline = Date(timeIntervalSinceNow: 5)
        while !done() && Date() < deadline { usleep(20_000) }
    }

    /// The process that owns `org.freedesktop.secrets` on this bus, if any.
    var keyringPID: pid_t? {
        guard let r = try? run("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.DBus", "/",
                                             "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:org.freedesktop.secrets"]),
              r.status == 0, let word = r.output.split(whereSeparator: \.isWhitespace).last else { return nil }
        return pid_t(word)
    }

    /// `kill -9` of the daemon; returns once the name is free again.
    func killKeyring() {
        guard let pid = keyringPID else { return }
        kill(pid, SIGKILL)
        Self.poll { keyringPID != pid }
    }

    /// Brings back an unlocked daemon: headless, a restart with `--unlock` is the
    /// way to unlock (`UnlockWithMasterPassword` aside).
    func restartUnlocked() throws {
        killKeyring()
        try startKeyring()
        XCTAssertEqual(try collectionLocked(), false, "the restarted keyring is unlocked")
    }

    /// The login collection's `Locked` property; nil when nobody answers.
    func collectionLocked() throws -> Bool? {
        let r = try run("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets/collection/login",
                                      "org.freedesktop.DBus.Properties.Get", "string:org.freedesktop.Secret.Collection", "string:Locked"])
        guard r.status == 0 else { return nil }
        return r.output.hasSuffix("true") ? true : r.output.hasSuffix("false") ? false : nil
    }

    /// Locks the login collection, as a user locking the screen or the keyring does.
    func lockCollection() throws {
        let r = try run("dbus-send", ["--session", "--print-reply", "--dest=org.freedesktop.secrets", "/org/freedesktop/secrets",
                                      "org.freedesktop.Secret.Service.Lock", "array:objpath:/org/freedesktop/secrets/collection/login"])
        XCTAssertEqual(r.status, 0, r.output)
    }

    /// `secret-tool lookup application auth-agent provider P …`: the secret, or nil.
    func lookup(_ attributes: [String]) throws -> String? {
        let r = try run("secret-tool", ["lookup", "application", "auth-agent"] + attributes)
        return r.status == 0 && !r.output.isEmpty ? r.output : nil
    }

    /// How many auth-agent items (with these further attributes) `secret-tool search --all` finds.
    func itemCount(_ attributes: [String] = []) throws -> Int {
        let r = try run("secret-tool", ["search", "--all", "application", "auth-agent"] + attributes)
        return r.output.components(separatedBy: "\n").filter { $0.hasPrefix("[/") }.count
    }

    /// Runs a tool on this bus; stdout and stderr together (bounded by `timeout`).
    func run(_ tool: String, _ arguments: [String], input: String? = nil, timeout: Double = 20) throws -> (status: Int32, output: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.which(tool) ?? tool)
        p.arguments = arguments
        p.environment = environment
        let out = Pipe(), inPipe = Pipe()
        p.standardOutput = out
        p.standardError = out
        p.standardInput = inPipe
        try p.run()
        if let input { inPipe.fileHandleForWriting.write(Data(input.utf8)) }
        try? inPipe.fileHandleForWriting.close()
        let collected = Locked(Data())
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            collected.withLock { $0 = data }
            done.signal()
        }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while p.isRunning && Date() < deadline { usleep(5_000) }
        if p.isRunning { p.terminate() }
        p.waitUntilExit()
        // gnome-keyring-daemon's forked child keeps the pipe open: do not wait for its end.
        _ = done.wait(timeout: .now() + 0.5)
        return (p.terminationStatus, String(decoding: collected.current, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// posix_spawn + waitpid rather than `Process`: Foundation's `Process` waits
    /// for the end of a pipe the daemon (forked into the background) inherits,
    /// so `waitUntilExit` would wait for the daemon's death.
    private func spawnAndWait(_ argv: [String], extra: [String: String]) -> Int32 {
        let env = environment.merging(extra) { _, new in new }.map { "\($0)=\($1)" }
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = env.map { strdup($0) } + [nil]
        defer { (cArgs + cEnv).forEach { free($0) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, argv[0], nil, nil, cArgs, cEnv) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : -1
    }

    static func which(_ tool: String) -> String? {
        let dirs = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":").map(String.init)
        for dir in dirs + ["/usr/sbin", "/sbin"] {
            let path = "\(dir)/\(tool)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }
}
