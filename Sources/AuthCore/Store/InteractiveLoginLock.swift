extension FileSessionStore {
    /// A second lock per provider, beside the store's own, held by a one-shot process for the
    /// whole of an interactive login (which can wait minutes for the user): parallel credential
    /// helpers (kubectl runs one per command) then wait for that login instead of each prompting.
    /// Separate from `tryLock` because the login itself takes that lock to save its session.
    /// Returns nil when another process still holds it after `timeout` seconds.
    public func interactiveLoginLock(_ provider: String, timeout: Double) throws -> StoreLock? {
        let lockPath = "\(directory.path)/\(try FileSessionStore.checkedName(provider)).login.lock"
        guard let fd = try FileLock.acquire(lockPath, timeout: timeout) else { return nil }
        return StoreLock { FileLock.release(fd) }
    }
}
