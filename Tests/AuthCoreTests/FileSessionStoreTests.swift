import TestSupport
import XCTest
import AuthCore
import JSON
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

final class FileSessionStoreTests: XCTestCase {
    private var temp: TemporaryDirectory!
    private var warnings: WarningLog!

    override func setUpWithError() throws {
        temp = try TemporaryDirectory()
        warnings = WarningLog()
    }

    override func tearDown() { temp.remove() }

    private var dir: URL { temp.url.appendingPathComponent("state/auth-agent", isDirectory: true) }

    private func makeStore() throws -> FileSessionStore { try FileSessionStore(directory: dir, warn: warnings.sink) }

    private func mode(_ path: String) -> mode_t? {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o777 : nil
    }

    private static func session(_ generation: Int, userBytes: Int = 0) -> Session {
        Session(accessToken: "access-\(generation)", refreshToken: "refresh-\(generation)",
                expiresAt: Date(timeIntervalSince1970: 1_800_000_000), user: .string(String(repeating: "u", count: userBytes)),
                obtainedAt: Date(timeIntervalSince1970: 1_700_000_000), generation: generation)
    }

    /// Writes a session file the way a user or another program might, with a private mode.
    private func plant(_ text: String, as provider: String) throws {
        let file = dir.appendingPathComponent("\(provider).json")
        try Data(text.utf8).write(to: file)
        XCTAssertEqual(chmod(file.path, 0o600), 0)
    }

    private func files() -> [String] { (try? FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()) ?? [] }

    func testCreatesDirectoryWithMode0700() throws {
        _ = try makeStore()
        XCTAssertEqual(mode(dir.path), 0o700)
        XCTAssertEqual(mode(dir.deletingLastPathComponent().path), 0o700)
        XCTAssertEqual(warnings.all, [])
    }

    func testTightensALooseExistingDirectoryAndWarns() throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(dir.path, 0o755), 0)
        _ = try makeStore()
        XCTAssertEqual(mode(dir.path), 0o700)
        XCTAssertEqual(warnings.all.count, 1)
        XCTAssertTrue(warnings.all[0].contains(dir.path))
    }

    func testRefusesAFileWhereTheDirectoryShouldBe() throws {
        try FileManager.default.createDirectory(at: dir.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertTrue(FileManager.default.createFile(atPath: dir.path, contents: Data()))
        XCTAssertThrowsError(try makeStore())
    }

    /// Issue 10 item 12: a symlinked store directory is refused, and the target's mode is left alone.
    func testRefusesASymlinkedStoreDirectoryWithoutTouchingTheTarget() throws {
        let target = temp.url.appendingPathComponent("target", isDirectory: true)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(target.path, 0o755), 0)
        try FileManager.default.createDirectory(at: dir.deletingLastPathComponent(), withIntermediateDirectories: true)
        XCTAssertEqual(symlink(target.path, dir.path), 0)
        XCTAssertThrowsError(try makeStore()) { error in
            XCTAssertTrue("\(error)".contains(dir.path), "\(error)")
            XCTAssertTrue("\(error)".contains("symbolic link"), "\(error)")
        }
        XCTAssertEqual(mode(target.path), 0o755, "the link was not followed")
        XCTAssertEqual(warnings.all, [])
    }

    /// Parents of the store directory may be symlinks (a linked home or ~/.local is common).
    func testAcceptsASymlinkedParent() throws {
        let real = temp.url.appendingPathComponent("real", isDirectory: true)
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: true)
        let link = temp.url.appendingPathComponent("link")
        XCTAssertEqual(symlink(real.path, link.path), 0)
        let store = try FileSessionStore(directory: link.appendingPathComponent("auth-agent"), warn: warnings.sink)
        try store.save(Self.session(1), for: "api")
        XCTAssertEqual(try store.load("api")?.accessToken, "access-1")
    }

    /// Issue 10 item 10: a symlink planted at the lock file is refused with an error that names it.
    func testASymlinkAtTheLockFileIsRefusedAndNamed() throws {
        let store = try makeStore()
        let target = temp.url.appendingPathComponent("victim").path
        let lock = dir.appendingPathComponent("api.lock").path
        XCTAssertEqual(symlink(target, lock), 0)
        XCTAssertThrowsError(try store.tryLock("api")) { error in
            XCTAssertEqual(error as? SessionStoreError, .io("\(lock) is a symbolic link; remove it (a lock file must be a regular file)"))
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: target), "nothing was created through the link")
    }

    func testSaveLoadRemove() throws {
        let store = try makeStore()
        XCTAssertNil(try store.load("api"))
        try store.save(Self.session(3), for: "api")
        XCTAssertEqual(try store.load("api"), Self.session(3))
        let file = dir.appendingPathComponent("api.json").path
        XCTAssertEqual(mode(file), 0o600)
        let envelope = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
        XCTAssertEqual(envelope["version"], 1)
        XCTAssertEqual(envelope["session"]?["generation"], 3)
        try store.save(Self.session(4), for: "api")
        XCTAssertEqual(try store.load("api")?.generation, 4)
        XCTAssertEqual(mode(file), 0o600)
        try store.remove("api")
        XCTAssertNil(try store.load("api"))
        try store.remove("api")
        XCTAssertEqual(files(), [], "no temporary files left behind")
        XCTAssertEqual(warnings.all, [])
    }

    func testLooseFileModeIsTightenedOnLoad() throws {
        let store = try makeStore()
        try store.save(Self.session(1), for: "api")
        let file = dir.appendingPathComponent("api.json").path
        XCTAssertEqual(chmod(file, 0o644), 0)
        XCTAssertEqual(try store.load("api"), Self.session(1))
        XCTAssertEqual(mode(file), 0o600)
        XCTAssertEqual(warnings.all.count, 1)
    }

    func testCorruptFileIsMovedAsideWithAWarning() throws {
        let store = try makeStore()
        let file = dir.appendingPathComponent("api.json")
        try plant("{\"version\":1,\"session\":{\"accessToken\":\"LEAKED-TOKEN\"", as: "api")
        XCTAssertNil(try store.load("api"))
        let remaining = files()
        XCTAssertEqual(remaining.count, 1)
        XCTAssertTrue(remaining[0].hasPrefix("api.json.corrupt-"), remaining[0])
        let stamp = Int(remaining[0].dropFirst("api.json.corrupt-".count))
        XCTAssertNotNil(stamp)
        XCTAssertLessThan(abs(stamp! - Int(Date().timeIntervalSince1970)), 5)
        XCTAssertEqual(warnings.all.count, 1)
        XCTAssertTrue(warnings.all[0].contains(file.path))
        XCTAssertFalse(warnings.all[0].contains("LEAKED-TOKEN"))
        XCTAssertNil(try store.load("api"), "logged out, and the corrupt copy is kept")
        XCTAssertEqual(warnings.all.count, 1)
    }

    func testUnreadableRecordsAreSetAside() throws {
        let store = try makeStore()
        let good = String(decoding: JSONSerializer.bytes(Self.session(1).toJSON()), as: UTF8.self)
        let bodies = ["", "[]", "{\"session\":\(good)}", "{\"version\":2,\"session\":\(good)}",
                      "{\"version\":1,\"session\":{\"accessToken\":5}}", "{\"version\":1}"]
        for (index, body) in bodies.enumerated() {
            let provider = "p\(index)"
            try plant(body, as: provider)
            XCTAssertNil(try store.load(provider), body)
            XCTAssertTrue(files().contains { $0.hasPrefix("\(provider).json.corrupt-") }, body)
        }
        XCTAssertEqual(warnings.all.count, bodies.count)
    }

    func testAFifoOrDirectoryInPlaceOfTheFileIsSetAsideWithoutBlocking() throws {
        let store = try makeStore()
        XCTAssertEqual(mkfifo(dir.appendingPathComponent("fifo.json").path, 0o600), 0)
        XCTAssertEqual(mkdir(dir.appendingPathComponent("dir.json").path, 0o700), 0)
        XCTAssertNil(try store.load("fifo"))
        XCTAssertNil(try store.load("dir"))
        XCTAssertTrue(files().contains { $0.hasPrefix("fifo.json.corrupt-") })
        XCTAssertTrue(files().contains { $0.hasPrefix("dir.json.corrupt-") })
        XCTAssertEqual(warnings.all.count, 2)
    }

    func testASymlinkIsRefused() throws {
        let store = try makeStore()
        let target = temp.url.appendingPathComponent("elsewhere.json")
        try FileSessionStore(directory: temp.url, warn: { _ in }).save(Self.session(1), for: "elsewhere")
        XCTAssertEqual(symlink(target.path, dir.appendingPathComponent("api.json").path), 0)
        XCTAssertThrowsError(try store.load("api"))
    }

    func testReplaceIsAtomicUnderConcurrentReads() throws {
        let store = try makeStore()
        try store.save(Self.session(0), for: "api")
        let done = TestBox(false)
        let writer = Thread {
            for generation in 1...150 {
                try? store.save(Self.session(generation, userBytes: (generation % 7) * 3000), for: "api")
            }
            done.set(true)
        }
        writer.start()
        var reads = 0
        var last = 0
        while !done.get() {
            let loaded = try store.load("api")
            XCTAssertNotNil(loaded)
            if let loaded {
                XCTAssertGreaterThanOrEqual(loaded.generation, last)
                last = loaded.generation
            }
            reads += 1
        }
        XCTAssertEqual(try store.load("api")?.generation, 150)
        XCTAssertGreaterThan(reads, 10)
        XCTAssertEqual(warnings.all, [], "every read parsed")
        XCTAssertEqual(files(), ["api.json"])
    }

    func testLockSerialisesThreads() throws {
        let store = try makeStore()
        let inside = TestBox(0)
        let overlaps = TestBox(0)
        let counter = TestBox(0)
        let group = DispatchGroup()
        for _ in 0..<2 {
            group.enter()
            Thread {
                for _ in 0..<25 {
                    try? store.withLock("api", timeout: 5) {
                        if inside.update({ $0 += 1; return $0 }) > 1 { overlaps.update { $0 += 1 } }
                        let value = counter.get()
                        usleep(500)
                        counter.set(value + 1)
                        inside.update { $0 -= 1 }
                    }
                }
                group.leave()
            }.start()
        }
        XCTAssertEqual(group.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(counter.get(), 50)
        XCTAssertEqual(overlaps.get(), 0)
        XCTAssertTrue(files().contains("api.lock"))
    }

    func testLockTimesOutAndIsPerProvider() throws {
        let store = try makeStore()
        let otherInstance = try makeStore()
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let holder = Thread {
            try? store.withLock("api", timeout: 1) {
                held.signal()
                release.wait()
            }
        }
        holder.start()
        held.wait()
        let start = Date()
        XCTAssertThrowsError(try otherInstance.withLock("api", timeout: 0.15) { XCTFail("must not run") }) { error in
            XCTAssertEqual(error as? SessionStoreError, .lockTimeout(provider: "api"))
        }
        let waited = Date().timeIntervalSince(start)
        XCTAssertGreaterThanOrEqual(waited, 0.14)
        XCTAssertLessThan(waited, 1.5)
        XCTAssertEqual(try store.withLock("corp", timeout: 0) { 42 }, 42, "another provider's lock is free")
        release.signal()
        XCTAssertEqual(try store.withLock("api", timeout: 2) { "got it" }, "got it")
    }

    func testLockIsReleasedWhenTheBodyThrows() throws {
        struct Boom: Error {}
        let store = try makeStore()
        XCTAssertThrowsError(try store.withLock("api", timeout: 1) { throw Boom() }) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(try store.withLock("api", timeout: 0) { 1 }, 1)
    }

    func testModificationStampChangesOnEveryWrite() throws {
        let store = try makeStore()
        XCTAssertNil(store.modificationStamp("api"))
        try store.save(Self.session(1), for: "api")
        let first = try XCTUnwrap(store.modificationStamp("api"))
        XCTAssertEqual(store.modificationStamp("api"), first)
        try store.save(Self.session(1), for: "api")
        let second = try XCTUnwrap(store.modificationStamp("api"))
        XCTAssertNotEqual(first, second, "a rename gives a new inode even when size and second match")
        try store.remove("api")
        XCTAssertNil(store.modificationStamp("api"))
    }

    func testRejectsProviderNamesThatAreNotFileNames() throws {
        let store = try makeStore()
        for name in ["", ".", "..", "../x", "a/b", "a\u{0}b"] {
            XCTAssertThrowsError(try store.save(Self.session(1), for: name), name)
            XCTAssertThrowsError(try store.load(name), name)
        }
        XCTAssertEqual(files(), [])
    }

    func testDefaultDirectory() {
        XCTAssertEqual(FileSessionStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/h"]).path,
                       "/x/state/auth-agent")
        XCTAssertEqual(FileSessionStore.defaultDirectory(environment: ["HOME": "/h"]).path, "/h/.local/state/auth-agent")
        XCTAssertEqual(FileSessionStore.defaultDirectory(environment: ["XDG_STATE_HOME": "relative", "HOME": "/h"]).path,
                       "/h/.local/state/auth-agent")
        XCTAssertEqual(FileSessionStore.defaultDirectory(environment: ["XDG_STATE_HOME": "", "HOME": "/h"]).path,
                       "/h/.local/state/auth-agent")
    }
    // MARK: Issue 19, item 2: records that grow, leftovers that pile up

    /// A record the reader would set aside (over 1 MiB) is refused with a clear
    /// error, and the session already stored stays readable.
    func testARecordLargerThanAReaderAcceptsIsRefusedAndNothingIsLost() throws {
        let store = try makeStore()
        try store.save(Self.session(1), for: "corp")
        XCTAssertThrowsError(try store.save(Self.session(2, userBytes: 1 << 20), for: "corp")) { error in
            XCTAssertTrue("\(error)".contains("more than the 1 MiB a record may hold"), "\(error)")
            XCTAssertTrue("\(error)".contains("nothing was written"), "\(error)")
        }
        XCTAssertEqual(try store.load("corp"), Self.session(1))
        XCTAssertEqual(files().filter { $0.contains(".corrupt-") || $0.contains(".tmp-") }, [])
    }

    /// At start: set-aside records older than 30 days and temporary files a crash left
    /// (older than an hour) are removed; recent ones, and everything else, stay.
    func testOldSetAsideRecordsAndLeftoverTemporaryFilesAreRemovedAtStart() throws {
        _ = try makeStore()
        let now = Int(Date().timeIntervalSince1970)
        let old = "corp+ab.json.corrupt-\(now - 31 * 24 * 3600)", oldTwin = "corp+ab.json.corrupt-\(now - 40 * 24 * 3600)-1"
        let recent = "corp+ab.json.corrupt-\(now - 29 * 24 * 3600)"
        let staleTemporary = ".corp+ab.json.tmp-123-456", freshTemporary = ".corp+ab.json.tmp-789-012"
        for name in [old, oldTwin, recent, staleTemporary, freshTemporary, "corp+ab.json", "notes.txt"] {
            try Data("x".utf8).write(to: dir.appendingPathComponent(name))
        }
        let twoHoursAgo = Date(timeIntervalSinceNow: -7200)
        try FileManager.default.setAttributes([.modificationDate: twoHoursAgo], ofItemAtPath: dir.appendingPathComponent(staleTemporary).path)
        _ = try makeStore()
        XCTAssertEqual(files(), [freshTemporary, "corp+ab.json", recent, "notes.txt"].sorted())
    }
}
