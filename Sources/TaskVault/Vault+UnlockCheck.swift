import TaskCrypto
import TaskSystem

/// What a full check of the unlock state found when the vault was
/// unlocked, kept so that "is it still unlocked?" can be answered again
/// cheaply (`Vault.isStillUnlocked(since:)`).
///
/// It holds no key and nothing secret: the identity (device and inode) of
/// each file the unlock state depends on, and the session's time limit.
public struct UnlockStamp: Sendable, Equatable {
  /// The files the unlock state is read from: `vault.tkv`,
  /// `device-only/unlock.session` and the session key file in the runtime
  /// directory with its `.next` (a session being started).
  let paths: [String]
  /// Their identities when the state was read (nil: the file was absent).
  let files: [FileIdentity?]
  /// The session's end, seconds since 1970 (UTC), or 0 for "until reboot
  /// or lock".
  public let notAfter: Int64

  /// The directories holding the files the unlock state is read from,
  /// each once: what a `DirectoryWatch` for
  /// `Vault.isStillUnlocked(since:watchedBy:)` watches.
  public var directories: [String] {
    var seen: [String] = []
    for path in paths {
      guard let slash = path.lastIndex(of: "/") else { continue }
      let directory = slash == path.startIndex ? "/" : String(path[..<slash])
      if !seen.contains(directory) { seen.append(directory) }
    }
    return seen
  }
}

extension Vault {
  /// Reads the whole unlock state (vault file, session file, session key,
  /// as `status()` does, about a millisecond) and, when the vault is
  /// unlocked, returns a stamp of it for `isStillUnlocked(since:)`.
  ///
  /// - Returns: the stamp, or nil when the vault is locked (for any reason:
  ///   never unlocked, locked, rebooted, the time limit passed).
  /// - Throws: `TaskVaultError.notInitialised`, `.damaged`,
  ///   `.unsupportedVersion`, `.system` (a file or the runtime directory
  ///   that is not private to the user, or a failed call).
  public func unlockStamp() throws -> UnlockStamp? {
    let lock = try Files.lock(layout.lockFile, exclusive: false)
    defer { lock.release() }
    let file = try readFile()
    let notAfter: Int64
    do {
      notAfter = try sessionKeys(file).notAfter
    } catch TaskVaultError.locked {
      return nil
    } catch TaskVaultError.unlockUnavailable {
      return nil
    }
    let keyFiles = try session.keyFiles(vaultID: file.vaultID)
    let paths = [layout.vaultFile, layout.sessionFile, keyFiles.current, keyFiles.next]
    return UnlockStamp(paths: paths, files: Self.identities(paths), notAfter: notAfter)
  }

  /// Whether the vault is still unlocked as it was when `stamp` was taken,
  /// answered from a few `lstat` calls, without reading a file or a key.
  ///
  /// It is true only while every file the unlock state depends on is the
  /// same file (same device and inode, or still absent) and the session's
  /// time limit has not passed. Every `lock`, `unlock`, passphrase change
  /// and reboot removes or replaces one of them (none is written in place),
  /// so any of those makes it false; false never means "locked" for sure,
  /// only that `unlockStamp()` must be read again. A caller that wants a
  /// bound on how long it trusts a stamp (against a change this cannot
  /// see, such as a file restored to the same inode) reads a new one after
  /// that time.
  ///
  /// - Parameter stamp: a stamp from `unlockStamp()` of this vault.
  /// - Returns: true when nothing the unlock state depends on changed.
  public func isStillUnlocked(since stamp: UnlockStamp) -> Bool {
    isStillUnlocked(since: stamp, watchedBy: nil)
  }

  /// `isStillUnlocked(since:)`, answered without examining a file while
  /// `watch` saw nothing change in `stamp.directories`: every `lock`,
  /// `unlock`, passphrase change and reboot removes or replaces a file in
  /// one of them. The time limit is still checked. Once the watch saw a
  /// change, the files are examined as `isStillUnlocked(since:)` does.
  ///
  /// - Parameters:
  ///   - stamp: a stamp from `unlockStamp()` of this vault.
  ///   - watch: a watch of `stamp.directories`, made before a check of
  ///     `stamp` (by `isStillUnlocked(since:)`) that found it true; nil to
  ///     examine the files every time.
  /// - Returns: true when nothing the unlock state depends on changed.
  public func isStillUnlocked(since stamp: UnlockStamp, watchedBy watch: DirectoryWatch?) -> Bool {
    guard stamp.notAfter == 0 || environment.now() < stamp.notAfter else { return false }
    if let watch, !watch.sawChange() { return true }
    return Self.identities(stamp.paths) == stamp.files
  }

  /// The identities of `paths` now; a file that cannot be examined counts
  /// as absent (and so as changed, when it was there).
  private static func identities(_ paths: [String]) -> [FileIdentity?] {
    paths.map { (try? FileStatus.of($0))?.identity }
  }
}
