import TaskCrypto
import TaskSystem

/// A mark on the device-only directory that tells backup tools to skip it.
public enum ExclusionMarker: String, Sendable, Equatable, CaseIterable {
  /// `CACHEDIR.TAG`, starting with the standard signature line: honoured
  /// by GNU tar `--exclude-caches`, borg `--exclude-caches` and restic
  /// `--exclude-caches`.
  case cacheDirectoryTag = "CACHEDIR.TAG"
  /// `.nobackup`, an empty file: honoured by borg and restic
  /// `--exclude-if-present .nobackup` (and by several desktop tools).
  case noBackupFile = ".nobackup"
  /// The extended attribute `user.xdg.robots.backup` = `false` on the
  /// directory (the freedesktop.org convention), where the file system
  /// supports user extended attributes.
  case backupAttribute = "user.xdg.robots.backup"
}

/// What `Vault.exclusionMarkerState()` found on the device-only directory.
public struct ExclusionMarkerState: Sendable, Equatable {
  /// Whether `device-only/` exists at all.
  public let directoryExists: Bool
  /// The markers in place and correct.
  public let present: [ExclusionMarker]
  /// The markers missing or wrong (a `CACHEDIR.TAG` without the signature
  /// counts as missing).
  public let missing: [ExclusionMarker]
  /// True when the file system refuses user extended attributes
  /// (`ENOTSUP`); the attribute is then neither present nor missing.
  public let attributeUnsupported: Bool
}

/// The exact first line of a cache directory tag (Bryan Ford's
/// Cache Directory Tagging Specification).
public let cacheDirectoryTagSignature = "Signature: 8a477f597d28d172789f06886806bc55"

enum Markers {
  static let tagContents = Array(
    (cacheDirectoryTagSignature + "\n"
      + "# This file is a cache directory tag created by TaskKey.\n"
      + "# The directory holds device-only keys that must never be backed up or copied:\n"
      + "# backup tools that honour cache directory tags (tar/borg/restic --exclude-caches) skip it.\n"
      + "# For information about cache directory tags, see https://bford.info/cachedir/\n").utf8)
  static let attributeValue = Array("false".utf8)
}

extension Vault {
  /// Makes `device-only/` (mode 0700) if missing and re-creates whichever
  /// exclusion marker is missing or wrong. An `ENOTSUP` from the file
  /// system for the extended attribute is not an error.
  ///
  /// - Throws: `TaskVaultError.system` (a failed call, or a directory that
  ///   is not private to the user).
  public func prepareDeviceOnlyDirectory() throws {
    let path = deviceOnlyDirectory
    try system { try PrivateDirectory.make(path, parents: false) }
    let state = try exclusionMarkerState()
    guard !state.missing.isEmpty else { return }
    for marker in state.missing {
      switch marker {
      case .cacheDirectoryTag:
        try Markers.tagContents.withUnsafeBytes { try environment.replaceFile(path + "/" + marker.rawValue, with: $0) }
      case .noBackupFile:
        try [UInt8]().withUnsafeBytes { try environment.replaceFile(path + "/" + marker.rawValue, with: $0) }
      case .backupAttribute:
        if case .failed(let code) = ExtendedAttribute.set(marker.rawValue, Markers.attributeValue, on: path) {
          throw TaskVaultError.system(.failed(call: "setxattr", path: path, errno: code))
        }
      }
    }
  }

  /// Reports which exclusion markers the device-only directory carries;
  /// changes nothing.
  ///
  /// - Throws: `TaskVaultError.system` for an unexpected failure to read.
  public func exclusionMarkerState() throws -> ExclusionMarkerState {
    try Self.exclusionMarkerState(ofVaultAt: directory)
  }

  /// Reports which exclusion markers `<directory>/device-only` carries,
  /// without opening the vault (so it works while permissions are wrong).
  ///
  /// - Returns: the markers present, missing and unsupported.
  public static func exclusionMarkerState(ofVaultAt directory: String) throws -> ExclusionMarkerState {
    let path = VaultLayout(directory: directory).deviceOnlyDirectory
    guard (try? FileStatus.of(path))??.kind == .directory else {
      return ExclusionMarkerState(
        directoryExists: false, present: [], missing: ExclusionMarker.allCases, attributeUnsupported: false)
    }
    var present = [ExclusionMarker]()
    var missing = [ExclusionMarker]()
    var unsupported = false
    let signature = Array(cacheDirectoryTagSignature.utf8)
    let tagPath = path + "/" + ExclusionMarker.cacheDirectoryTag.rawValue
    if let tag = try? Files.readPrivate(tagPath, limit: 4096), tag.starts(with: signature) {
      present.append(.cacheDirectoryTag)
    } else {
      missing.append(.cacheDirectoryTag)
    }
    if (try? Files.readPrivate(path + "/.nobackup", limit: 4096)) != nil {
      present.append(.noBackupFile)
    } else {
      missing.append(.noBackupFile)
    }
    switch ExtendedAttribute.get(ExclusionMarker.backupAttribute.rawValue, on: path) {
    case .value(let value) where value == Markers.attributeValue: present.append(.backupAttribute)
    case .unsupported: unsupported = true
    default: missing.append(.backupAttribute)
    }
    return ExclusionMarkerState(
      directoryExists: true, present: present, missing: missing, attributeUnsupported: unsupported)
  }
}
