import TaskCrypto
import TaskSystem

/// Every file of a vault directory, named in one place.
///
///     <directory>/
///       vault.tkv              the vault file: header, wrapped key, synchronisable store
///       vault.tkv.prev         the previous generation, only during a write
///       vault.tkv.tmp          the next generation, only during a write
///       vault.lock             the flock every read and write holds
///       device-only/           never backed up or synced (exclusion markers)
///         CACHEDIR.TAG, .nobackup
///         device.tkv           the device-only store (+ .prev, .tmp during a write)
///         unlock.session       the master keys sealed under the session key
///         assistant-keys.*     the assistant registry (read and written by AssistantKeys)
///     <runtime directory>/<vault id hex>.key   the session key, in memory only
public struct VaultLayout: Sendable, Equatable {
  /// The vault directory.
  public let directory: String

  /// The layout of the vault in `directory`.
  public init(directory: String) { self.directory = directory }

  /// `vault.tkv`.
  public static let vaultFileName = "vault.tkv"
  /// `device-only`, the subdirectory that never leaves the device.
  public static let deviceOnlyDirectoryName = "device-only"
  /// `device.tkv`, inside `device-only/`.
  public static let deviceFileName = "device.tkv"
  /// `unlock.session`, inside `device-only/`.
  public static let sessionFileName = "unlock.session"
  /// `vault.lock`.
  public static let lockFileName = "vault.lock"
  /// `assistant-keys.registry`, inside `device-only/`: the assistant key registry.
  public static let assistantRegistryFileName = "assistant-keys.registry"
  /// `assistant-keys.last-used`, inside `device-only/`: advisory last-used times.
  public static let assistantLastUsedFileName = "assistant-keys.last-used"
  /// `assistant-keys.lock`, inside `device-only/`: the registry's read-modify-write lock.
  public static let assistantLockFileName = "assistant-keys.lock"
  /// The suffix of a previous generation kept during a write.
  public static let previousSuffix = ".prev"
  /// The suffix of the temporary file of a write.
  public static let temporarySuffix = ".tmp"

  /// The vault file.
  public var vaultFile: String { directory + "/" + Self.vaultFileName }
  /// The vault file's previous generation during a write.
  public var previousVaultFile: String { vaultFile + Self.previousSuffix }
  /// The vault file's temporary file during a write.
  public var temporaryVaultFile: String { vaultFile + Self.temporarySuffix }
  /// The lock file.
  public var lockFile: String { directory + "/" + Self.lockFileName }
  /// The device-only directory.
  public var deviceOnlyDirectory: String { directory + "/" + Self.deviceOnlyDirectoryName }
  /// The device-only file.
  public var deviceFile: String { deviceOnlyDirectory + "/" + Self.deviceFileName }
  /// The device-only file's previous generation during a write.
  public var previousDeviceFile: String { deviceFile + Self.previousSuffix }
  /// The device-only file's temporary file during a write.
  public var temporaryDeviceFile: String { deviceFile + Self.temporarySuffix }
  /// The unlock session file.
  public var sessionFile: String { deviceOnlyDirectory + "/" + Self.sessionFileName }

  /// The session key file for the vault `vaultID` in a runtime directory.
  public static func sessionKeyFile(in runtimeDirectory: String, vaultID: [UInt8]) -> String {
    runtimeDirectory + "/" + Hex.encode(vaultID) + ".key"
  }

  /// The session key file of this vault directory: `<vault id>-<home>.key`,
  /// where `<home>` is 16 hex digits of SHA-256 over the directory's device
  /// and inode numbers, so two homes holding copies of one vault (a restore
  /// drill) have independent sessions, while the same directory keeps its
  /// session when renamed.
  ///
  /// - Throws: `SystemError` when the directory cannot be examined.
  public func sessionKeyFile(in runtimeDirectory: String, vaultID: [UInt8]) throws -> String {
    guard let identity = try FileStatus.of(directory)?.identity else {
      throw SystemError.notFound(directory, call: "lstat")
    }
    var bytes = [UInt8]()
    for value in [identity.device, identity.inode] {
      bytes += (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
    }
    let home = Hex.encode(Array(SHA256.hash(data: bytes).bytes.prefix(8)))
    return runtimeDirectory + "/" + Hex.encode(vaultID) + "-" + home + ".key"
  }

  /// The files a write leaves behind only when it was interrupted,
  /// relative to the vault directory.
  public static let leftoverFiles = [
    vaultFileName + temporarySuffix, vaultFileName + previousSuffix,
    deviceOnlyDirectoryName + "/" + deviceFileName + temporarySuffix,
    deviceOnlyDirectoryName + "/" + deviceFileName + previousSuffix,
    deviceOnlyDirectoryName + "/" + sessionFileName + temporarySuffix,
    deviceOnlyDirectoryName + "/" + assistantRegistryFileName + temporarySuffix,
    deviceOnlyDirectoryName + "/" + assistantLastUsedFileName + temporarySuffix,
  ]
}
