extension FileSessionStore {
    /// The interactive-login lock `name` (`SessionStore.tryLoginLock`): a file beside the store's
    /// own locks, so every agent and helper process of the user excludes the others.
    public func tryLoginLock(_ name: String) throws -> StoreLock? {
        let lockPath = "\(directory.path)/\(try FileSessionStore.checkedName(name)).login.lock"
        guard let fd = try FileLock.acquire(lockPath, timeout: 0) else { return nil }
        return StoreLock { FileLock.release(fd) }
    }
}

extension KeyringSessionStore {
    /// The keyring store keeps its records, and so its locks, in a file store.
    public func tryLoginLock(_ name: String) throws -> StoreLock? { try records.tryLoginLock(name) }
}

extension MemorySessionStore {
    /// One process: the login locks are this store's own, apart from its provider locks.
    public func tryLoginLock(_ name: String) throws -> StoreLock? { try tryLock("login:" + name) }
}
