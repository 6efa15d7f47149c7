import TaskCrypto

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
///         assistant-keys.*     the assistant registry (named by AssistantKeys)
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

  /// The files a write leaves behind only when it was interrupted,
  /// relative to the vault directory.
  public static let leftoverFiles = [
    vaultFileName + temporarySuffix, vaultFileName + previousSuffix,
    deviceOnlyDirectoryName + "/" + deviceFileName + temporarySuffix,
    deviceOnlyDirectoryName + "/" + deviceFileName + previousSuffix,
  ]
}
