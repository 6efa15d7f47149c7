import FoundationEssentials
import TaskCrypto
import TaskSystem
import TaskVault

/// The registry's files in one directory, and the only place that touches
/// them, through TaskSystem: its one durable replace (temp file, fsync,
/// rename, directory fsync) over the file-system seam, an `flock` for
/// read-modify-write, and its owner-only reads (regular file, the user's,
/// no group or other bits, size cap).
///
/// A failure while writing is `AssistantKeyError.system`; a file or
/// directory that cannot be read or trusted is `.registryDamaged`.
struct RegistryFiles {
  let directory: String
  /// The seam every write goes through; tests inject faults here.
  var fileSystem: any FileSystem = PosixFileSystem()

  var registryPath: String { directory + "/" + AssistantKeyRegistry.FileName.registry }
  var lastUsedPath: String { directory + "/" + AssistantKeyRegistry.FileName.lastUsed }
  var lockPath: String { directory + "/" + AssistantKeyRegistry.FileName.lock }

  /// Makes the directory (mode 0700) if it is missing, then refuses it when
  /// it is a symlink, not a directory, not ours, or open to group or others.
  func prepareDirectory() throws {
    do {
      try PrivateDirectory.make(directory, parents: false, allowingSymlink: false)
    } catch let error as SystemError where error.isRefusal {
      throw AssistantKeyError.registryDamaged(.unreadable(error))
    } catch let error as SystemError {
      throw AssistantKeyError.system(error)
    }
  }

  /// Refuses the directory when it is a symlink, not a directory, not
  /// ours, or open to group or others.
  func checkDirectory() throws {
    try reading { _ = try PrivateDirectory.check(directory, allowingSymlink: false) }
  }

  /// The (device, inode) at `path` without following a symlink, or nil
  /// when nothing is there.
  func identity(of path: String) throws -> FileIdentity? {
    try reading { try FileStatus.of(path)?.identity }
  }

  /// Opens and reads a registry-kind file, or returns nil when it does not
  /// exist. The file stays open in the result, which pins the inode so that
  /// its identity cannot be reused while it is cached.
  func read(_ path: String, limit: Int) throws -> (file: OpenFile, bytes: [UInt8])? {
    try reading {
      guard let file = try OpenFile.ownerOnly(path) else { return nil }
      return (file, try file.readAll(limit: limit))
    }
  }

  /// Opens a registry-kind file for random access, or returns nil when it
  /// does not exist; the open file pins the inode (see `read`).
  func open(_ path: String) throws -> OpenFile? {
    try reading { try OpenFile.ownerOnly(path) }
  }

  /// Opens a registry-kind file for reading and in-place writes (the
  /// last-used slots), or returns nil when it does not exist.
  func openForUpdate(_ path: String) throws -> OpenFile? {
    try reading { try OpenFile.ownerOnlyForUpdate(path) }
  }

  /// Writes `bytes` at `offset` of `file` in place (`pwrite`, no fsync).
  func write(_ bytes: [UInt8], to file: OpenFile, at offset: Int) throws {
    try reading { try file.descriptor.write(bytes, atOffset: UInt64(offset)) }
  }

  /// Random access to `file` by `pread`, its size as `fstat` gave it when
  /// opened; a failed read is `.registryDamaged(.unreadable)`.
  func source(_ file: OpenFile) -> RegistrySource {
    RegistrySource(size: file.size) { offset, count in
      try reading {
        var bytes = [UInt8](repeating: 0, count: count)
        try bytes.withUnsafeMutableBytes { try file.descriptor.read(into: $0, atOffset: UInt64(offset)) }
        return bytes
      }
    }
  }

  /// Replaces `path` with `bytes` durably and atomically (TaskSystem's
  /// `replace`). On failure before the rename the old file is untouched
  /// and the temporary file is removed.
  ///
  /// - Returns: the new file, open, so its identity is pinned (the caller
  ///   holds the lock, so nobody replaced it in between).
  @discardableResult
  func replace(_ path: String, with bytes: [UInt8]) throws -> OpenFile? {
    removeLegacyTemporaryFiles()
    do {
      try fileSystem.replace(path, contents: bytes)
    } catch let error as SystemError {
      throw AssistantKeyError.system(error)
    }
    return try reading { try OpenFile.ownerOnly(path) }
  }

  /// Removes `.assistant-keys.<hex>.tmp` files that writers before
  /// TaskSystem left when they were killed (they used random names, which
  /// no later write reused). Called under the lock, so none is in use.
  private func removeLegacyTemporaryFiles() {
    for name in AssistantKeyRegistry.legacyTemporaryFiles(in: directory) {
      try? fileSystem.unlink(directory + "/" + name)
    }
  }

  /// Runs `body` holding an exclusive `flock` on the lock file (created
  /// 0600 the first time).
  func withLock<Result>(_ body: () throws -> Result) throws -> Result {
    let lock: FileLock
    do {
      lock = try FileLock(path: lockPath, exclusive: true)
    } catch let error as SystemError {
      throw AssistantKeyError.system(error)
    }
    defer { lock.release() }
    return try body()
  }

  /// Runs a read-side TaskSystem call: any failure means the registry
  /// cannot be trusted (`registryDamaged`), and a file above the limit is
  /// `.tooLarge`.
  func reading<Result>(_ body: () throws -> Result) throws -> Result {
    do {
      return try body()
    } catch SystemError.tooLarge(_, let count, let limit) {
      throw AssistantKeyError.registryDamaged(.tooLarge(byteCount: count, limit: limit))
    } catch let error as SystemError {
      throw AssistantKeyError.registryDamaged(.unreadable(error))
    }
  }
}

extension AssistantKeyRegistry {
  /// The registry's files, all in the vault's `device-only/` directory
  /// (named with the rest of the vault's files in `VaultLayout`).
  public enum FileName {
    /// The registry itself.
    public static let registry = VaultLayout.assistantRegistryFileName
    /// The advisory last-used times.
    public static let lastUsed = VaultLayout.assistantLastUsedFileName
    /// The lock file of read-modify-write.
    public static let lock = VaultLayout.assistantLockFileName
  }

  /// The names of the `.assistant-keys.<hex>.tmp` files in `directory`,
  /// sorted: what writers before TaskSystem left when they were killed.
  /// The registry removes them under its lock; `doctor` reports them.
  public static func legacyTemporaryFiles(in directory: String) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
      .filter { $0.hasPrefix(".assistant-keys.") && $0.hasSuffix(".tmp") }.sorted()
  }
}
