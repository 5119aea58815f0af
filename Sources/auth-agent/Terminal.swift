import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import JSONRPC
import Locking
import Logging

/// The user's terminal (`/dev/tty`), for asking login fields: it works when stdin and stdout
/// belong to git or kubectl, and a secret is read with echo off.
struct Terminal {
    let fd: Int32

    /// The controlling terminal, or nil when there is none (a script, a CI job).
    static func controlling() -> Terminal? {
        let fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)
        return fd >= 0 ? Terminal(fd: fd) : nil
    }

    func show(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Asks for one field; a secret one with echo off, restored also when Ctrl-C ends the process.
    func ask(_ label: String, secret: Bool) throws(ToolFailure) -> String {
        var saved = termios()
        guard secret, tcgetattr(fd, &saved) == 0 else {
            show("\(label): ")
            return try readLine()
        }
        // Echo goes off before the prompt shows, and without flushing input (TCSANOW): whatever is
        // typed once the prompt is visible is read, and never echoed.
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        Interrupt.restoreTerminalOnInterrupt(fd: fd, saved)
        _ = tcsetattr(fd, TCSANOW, &quiet)
        show("\(label): ")
        defer {
            _ = tcsetattr(fd, TCSANOW, &saved)
            Interrupt.restoreTerminalOnInterrupt(fd: nil, saved)
            show("\n")
        }
        return try readLine()
    }

    /// One line from the terminal, without its newline; end of input is an error (nothing to log in with).
    private func readLine() throws(ToolFailure) -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { throw ToolFailure(.failed, "the terminal closed before the answer was complete") }
            if byte == 0x0A { break }
            line.append(byte)
        }
        if line.last == 0x0D { line.removeLast() }
        return String(decoding: line, as: UTF8.self)
    }
}

/// Text the command line shows people that others wrote (user names and ids from userinfo,
/// device codes, server error descriptions): a control character in it could move the cursor,
/// retitle the window, forge a row of `status` or hide what follows. C0 controls (newline
/// included), DEL, C1 controls (U+009B is a CSI on its own) and the bidi controls that reorder
/// text are shown as `\x1B` / `\u{202E}` instead. The one filter every printer of the command line uses.
enum TerminalText {
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else { out.unicodeScalars.append(scalar); continue }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            out += scalar.value < 0x80 ? "\\x" + (hex.count < 2 ? "0" : "") + hex : "\\u{" + hex + "}"
        }
        return out
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E...0x200F, 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }
}

/// Ctrl-C during a one-shot command: give the terminal its echo back, cancel the work in flight
/// (a login is abandoned; a session is only ever saved whole), say so, and exit 130.
enum Interrupt {
    private static let action = Locked<(@Sendable () -> Void)?>(nil)
    private static let terminal = Locked<(fd: Int32, saved: termios)?>(nil)
    private static let source = Locked<DispatchSourceSignal?>(nil)

    static func install() {
        signal(SIGINT, SIG_IGN)
        let s = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        s.setEventHandler {
            happened.withLock { $0 = true }
            if let held = terminal.current { var saved = held.saved; _ = tcsetattr(held.fd, TCSANOW, &saved) }
            action.current?()
            Logger.stderrSink("\nauth-agent: interrupted")
            exit(ToolFailure.Code.interrupted.rawValue)
        }
        s.resume()
        source.withLock { $0 = s }
    }

    /// Set once Ctrl-C arrived: from then on only the signal handler ends the process.
    private static let happened = Locked(false)

    /// Called by the main thread when its work ended: if that was because of Ctrl-C, it leaves the
    /// exit (code 130, after the work has unwound) to the handler rather than racing it.
    static func yieldIfInterrupted() {
        guard happened.current else { return }
        while true { pause() }
    }

    /// What to stop before exiting on Ctrl-C; nil when nothing is in flight.
    static func onInterrupt(_ cancel: (@Sendable () -> Void)?) {
        action.withLock { $0 = cancel }
    }

    static func restoreTerminalOnInterrupt(fd: Int32?, _ saved: termios) {
        terminal.withLock { $0 = fd.map { ($0, saved) } }
    }
}
