#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import AuthCore
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Locking
import Logging

/// The last line of an interactive login's prompt on a terminal: how long the code (or the
/// browser login) stays valid, counting down, rewritten in place once a second; and, where a
/// browser can be opened, `Press Enter to open the browser` — a 300-character URL is no fun to
/// copy. It lives on a thread of its own from the prompt until the login ends, reading the
/// terminal for that Enter — and, for a browser login, for the redirect URL pasted back when
/// the browser cannot reach this machine. When stderr is not a terminal the expiry is said once.
final class LivePromptLine: Sendable {
    private let stopping = Locked(false)
    private let running = Locked<DispatchSemaphore?>(nil)
    private let canOpenBrowser: Bool
    /// Hands a pasted line to the waiting login: nil when taken, else why not.
    private let paste = Locked<(@Sendable (String) -> String?)?>(nil)

    /// - Parameter environment: decides whether a browser can be opened (`canOpenBrowser`).
    init(environment: [String: String]) {
        canOpenBrowser = Self.canOpenBrowser(environment)
    }

    /// From now on a line typed on the terminal (not a bare Enter) goes to `complete`: the
    /// browser login's redirect URL, pasted back.
    func acceptPaste(_ complete: @escaping @Sendable (String) -> String?) {
        paste.withLock { $0 = complete }
    }

    /// Whether the terminal takes a pasted redirect URL for this prompt.
    var acceptsPaste: Bool { paste.current != nil }

    /// A browser can be opened where there is a display: macOS, or an X11/Wayland session;
    /// never over SSH without a display (`BrowserLauncher.remoteWithoutDisplay`).
    static func canOpenBrowser(_ environment: [String: String]) -> Bool {
        if BrowserLauncher.remoteWithoutDisplay({ environment[$0] }) { return false }
        #if os(macOS)
        return true
        #else
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
        #endif
    }

    /// The URL Enter opens: the one that needs no typing.
    static func url(of prompt: LoginPrompt) -> String {
        switch prompt {
        case .deviceCode(_, let uri, let complete, _): return complete ?? uri
        case .browser(let url, _): return url
        }
    }

    static func expiry(of prompt: LoginPrompt) -> Date {
        switch prompt {
        case .deviceCode(_, _, _, let expiresAt), .browser(_, let expiresAt): return expiresAt
        }
    }

    /// `9:59`, `1:02:03`: what is left, rounded up so the last second shows `0:01`.
    static func clock(_ seconds: Double) -> String {
        let s = max(0, Int(seconds.rounded(.up)))
        let (h, m, r) = (s / 3600, s / 60 % 60, s % 60)
        let mmss = (h > 0 && m < 10 ? "0" : "") + "\(m):" + (r < 10 ? "0" : "") + "\(r)"
        return h > 0 ? "\(h):\(mmss)" : mmss
    }

    /// The countdown line's text at `now`; `offer`: Enter can open the browser.
    static func text(_ prompt: LoginPrompt, now: Date, offer: Bool, opened: Bool = false) -> String {
        let left = Self.expiry(of: prompt).timeIntervalSince(now)
        let what: String
        if case .deviceCode = prompt {
            what = left > 0 ? "the code expires in \(Self.clock(left))" : "the code has expired"
        } else {
            what = left > 0 ? "the login waits \(Self.clock(left)) more" : "the login has expired"
        }
        if opened { return "Opened the browser; \(what)." }
        if offer { return "Press Enter to open the browser; \(what)." }
        return what.prefix(1).uppercased() + what.dropFirst() + "."
    }

    /// The line said once where it cannot be rewritten (stderr is a file, a pipe, a log).
    static func onceText(_ prompt: LoginPrompt, now: Date) -> String {
        let expiresAt = expiry(of: prompt)
        let left = "in \(clock(expiresAt.timeIntervalSince(now)))"
        if case .deviceCode = prompt { return "The code expires at \(RFC3339.format(expiresAt)) (\(left))." }
        return "The login waits until \(RFC3339.format(expiresAt)) (\(left))."
    }

    /// Shows the line on `fd` (a terminal) and keeps it current until `stop()`; reads the
    /// controlling terminal for Enter when a browser can be opened.
    func start(_ prompt: LoginPrompt, fd: Int32, open: @escaping @Sendable (String) -> Void) {
        let done = DispatchSemaphore(value: 0)
        guard running.withLock({ r in
            guard r == nil else { return false }
            r = done
            return true
        }) else { return }
        // Enter is offered only where it can be read (the controlling terminal) and acted on;
        // the terminal is read for a pasted redirect URL too.
        let paste = self.paste.current
        let tty = canOpenBrowser || paste != nil ? Terminal.controlling() : nil
        DispatchQueue.global().async { [self] in
            defer { done.signal() }
            var opened = false
            var shown = ""
            var drawnAt = -1
            var typed: [UInt8] = []
            while !stopping.current {
                let line = Self.text(prompt, now: Date(), offer: tty != nil && canOpenBrowser, opened: opened)
                if fd == 2 {
                    // On stderr, beside log lines: drawn again when one cleared it (`StderrLiveLine`).
                    if line != shown || StderrLiveLine.cleared != drawnAt { drawnAt = StderrLiveLine.draw(line); shown = line }
                } else if line != shown {
                    Self.write(fd, "\r\u{1B}[K" + line)
                    shown = line
                }
                // Wakes at least every 200 ms: a second is never skipped, and stop() is quick.
                guard let tty, let entered = Self.lineTyped(tty.fd, within: 200, into: &typed) else {
                    if tty == nil { usleep(200_000) }
                    continue
                }
                if entered.isEmpty {
                    if canOpenBrowser, !opened {
                        opened = true
                        open(Self.url(of: prompt))
                    }
                } else if let paste {
                    // The refusal on a line of its own; the countdown goes on below it.
                    let problem = paste(entered)
                    let said = (problem.map { "That URL was not taken: \($0)." } ?? "Got the redirect URL; finishing the login…") + "\n"
                    if fd == 2 { StderrLiveLine.draw(said) } else { Self.write(fd, "\r\u{1B}[K" + said) }
                    shown = ""
                }
            }
            if fd == 2 { StderrLiveLine.end() } else { Self.write(fd, "\r\u{1B}[K") }
            if let tty { close(tty.fd) }
        }
    }

    /// Ends the line (cleared, so what follows starts on a clean line); waits for its thread.
    func stop() {
        guard let done = running.current else { return }
        stopping.withLock { $0 = true }
        done.wait()
    }

    /// The line completed on `fd` within `milliseconds` (trimmed; empty for a bare Enter), or nil;
    /// what came before its end waits in `typed` (a pasted URL can arrive in pieces).
    private static func lineTyped(_ fd: Int32, within milliseconds: Int32, into typed: inout [UInt8]) -> String? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, milliseconds) == 1 else { return nil }
        guard p.revents & Int16(POLLIN) != 0 else { usleep(UInt32(milliseconds) * 1000); return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { usleep(UInt32(milliseconds) * 1000); return nil }
        typed += buffer[..<n]
        guard let end = typed.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) else {
            if typed.count > 16_384 { typed.removeAll() }  // no URL is that long: not a paste
            return nil
        }
        let line = String(decoding: typed[..<end].drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed(), as: UTF8.self)
        typed.removeSubrange(...end)
        return line
    }

    private static func write(_ fd: Int32, _ text: String) {
        Terminal(fd: fd).show(text)
    }
}
