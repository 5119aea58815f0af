import AuthCore
import Foundation

/// `--stores`: what a session read and write cost in each store kind, the
/// keyring (through libsecret and the Secret Service on the session bus) beside
/// the file store, medians of `runs` operations, each on a fresh record as an
/// agent does it (load the provider's session; save a refreshed one).
/// Needs a Secret Service: run it under `dbus-run-session` with an unlocked
/// gnome-keyring (see the README); without one the keyring rows say so.
enum StoreScenario {
    static func run(report: Report, runs: Int = 200) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("auth-agent-bench-stores-\(getpid())")
        defer { try? FileManager.default.removeItem(at: directory) }
        guard let files = try? FileSessionStore(directory: directory.appendingPathComponent("file"), warn: { _ in }),
              let records = try? FileSessionStore(directory: directory.appendingPathComponent("keyring"), warn: { _ in }) else {
            report.row("store read/write", agent: "(no store)", baseline: "", ratio: "")
            return
        }
        let (fileRead, fileWrite) = measure(files, runs: runs)
        report.row("file store read", agent: Report.micros(fileRead), baseline: "", ratio: "")
        report.row("file store write", agent: Report.micros(fileWrite), baseline: "", ratio: "")
        if let problem = LibsecretStore.probe(timeout: 1) {
            report.row("keyring read/write", agent: "(none)", baseline: problem, ratio: "")
            return
        }
        let keyring = KeyringSessionStore(records: records, secrets: LibsecretStore(scope: directory.appendingPathComponent("keyring").path), labels: ["bench": "bench"], warn: { _ in })
        let (read, write) = measure(keyring, runs: runs)
        report.row("keyring read", agent: Report.micros(read), baseline: Report.micros(fileRead) + " (file)",
                   ratio: String(format: "%.1f× file", read / fileRead))
        report.row("keyring write", agent: Report.micros(write), baseline: Report.micros(fileWrite) + " (file)",
                   ratio: String(format: "%.1f× file", write / fileWrite))
        try? keyring.remove("bench")
    }

    /// Median microseconds of a load and of a save.
    static func measure(_ store: SessionStore, runs: Int) -> (read: Double, write: Double) {
        var reads: [Double] = []
        var writes: [Double] = []
        for n in 1...runs {
            let session = Session(accessToken: "bench-access-\(n)", refreshToken: "bench-refresh-\(n)",
                                  expiresAt: Date().addingTimeInterval(3600), obtainedAt: Date(), generation: n)
            var t0 = monotonicNanos()
            try? store.save(session, for: "bench")
            writes.append(Double(monotonicNanos() - t0) / 1000)
            t0 = monotonicNanos()
            _ = try? store.load("bench")
            reads.append(Double(monotonicNanos() - t0) / 1000)
        }
        reads.sort()
        writes.sort()
        return (reads[reads.count / 2], writes[writes.count / 2])
    }
}
