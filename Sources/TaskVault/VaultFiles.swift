import TaskSystem

/// Runs TaskSystem calls for the vault, wrapping a `SystemError` as
/// `TaskVaultError.system` (other errors pass through unchanged).
func system<Result>(_ body: () throws -> Result) throws -> Result {
  do {
    return try body()
  } catch let error as SystemError {
    throw TaskVaultError.system(error)
  }
}

/// The vault's reads of its own private files, through TaskSystem.
enum Files {
  /// Reads a private file whole (owner-only: regular file, the user's,
  /// mode without group or other bits); a file above `limit` is damaged.
  ///
  /// - Returns: nil when the file does not exist.
  static func readPrivate(_ path: String, limit: Int) throws -> [UInt8]? {
    do {
      return try OpenFile.readOwnerOnly(path, limit: limit)
    } catch SystemError.tooLarge(_, let count, let limit) {
      throw TaskVaultError.damaged(path: path, reason: "\(count) bytes is more than the limit of \(limit)")
    } catch let error as SystemError {
      throw TaskVaultError.system(error)
    }
  }

  /// Whether a private file exists at `path` (checked as `readPrivate` does).
  static func privateFileExists(_ path: String) throws -> Bool {
    try system { try OpenFile.ownerOnly(path) } != nil
  }

  /// Takes the vault's `flock`.
  static func lock(_ path: String, exclusive: Bool) throws -> FileLock {
    try system { try FileLock(path: path, exclusive: exclusive) }
  }
}
