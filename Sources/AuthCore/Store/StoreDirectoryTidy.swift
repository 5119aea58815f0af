#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a store directory collects and nobody removes, removed at start: records
/// set aside as unreadable (`<key>.json.corrupt-<unix time>`) once 30 days old, and
/// temporary files of atomic writes (`.<name>.tmp-<pid>-<n>`) that a crash left,
/// once an hour old (a write in progress takes milliseconds). One `readdir`.
enum StoreDirectoryTidy {
    static let corruptKeptSeconds = 30 * 24 * 3600
    static let temporaryKeptSeconds = 3600

    /// `now` is wall-clock time (`Date()`), not the core's `Clock`: it is compared with the times the
    /// file system and `FileSessionStore.setAside` stamp (an exemption listed in `WaitsOnTheClockTests`).
    static func run(_ directory: String, now: Int = Int(Date().timeIntervalSince1970)) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        var removed = false
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let (age, kept) = age(of: name, in: directory, now: now) else { continue }
            if age > kept, unlink("\(directory)/\(name)") == 0 { removed = true }
        }
        if removed { POSIX.syncDirectory(directory) }
    }

    /// Seconds since a leftover was set aside (the time in its name) or written
    /// (a temporary file's modification time), and how long it is kept; nil for anything else.
    private static func age(of name: String, in directory: String, now: Int) -> (Int, Int)? {
        guard let dot = name.lastIndex(of: ".") else { return nil }
        let tail = name[dot...]
        if name.hasPrefix("."), tail.hasPrefix(".tmp-") {
            guard let st = POSIX.linkStatus("\(directory)/\(name)"), st.st_mode & S_IFMT == S_IFREG else { return nil }
            return (now - POSIX.modificationNanoseconds(st).0, temporaryKeptSeconds)
        }
        guard tail.hasPrefix(".corrupt-"), name[..<dot].hasSuffix(".json") else { return nil }
        // `<time>`, or `<time>-<n>` when several were set aside in the same second.
        return Int(tail.dropFirst(".corrupt-".count).prefix { $0 != "-" }).map { (now - $0, corruptKeptSeconds) }
    }
}
