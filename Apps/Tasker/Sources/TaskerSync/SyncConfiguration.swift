import TaskCrypto

/// Which target one database syncs with, as this device set it up: the
/// device-only vault item of docs/formats/sync-storage.md, *The
/// configuration record*. Never read from the database, so a database
/// writer can neither point sync elsewhere nor change the target id.
public struct SyncConfiguration: Sendable, Equatable {
  /// Where the storage is.
  public enum Target: Sendable, Equatable {
    /// A folder (canonical path); the root is `<folder>/tasker-sync`.
    case folder(String)
    /// A WebDAV collection URL, the Basic user (nil: no authentication)
    /// and the certificate authority file pinned at setup (nil: the
    /// system's store); the root is `<url>/tasker-sync/`.
    case webdav(url: String, user: String?, caFile: String?)
  }

  /// Where the storage is.
  public var target: Target
  /// The target id the device pinned at setup: 32 hex digits.
  public var targetID: String
  /// This device's id: 32 hex digits.
  public var device: String
  /// This device's name, shown to the other devices.
  public var name: String

  /// A configuration.
  public init(target: Target, targetID: String, device: String, name: String) {
    self.target = target
    self.targetID = targetID
    self.device = device
    self.name = name
  }

  /// A folder configuration (what tests and the folder setup make).
  public init(folder: String, targetID: String, device: String, name: String) {
    self.init(target: .folder(folder), targetID: targetID, device: device, name: name)
  }

  static let versionLine = "tasker-sync 1"
  static let formatPrefix = "tasker-sync "
  /// The longest record read: 8 KiB.
  public static let maximumByteCount = 8 << 10

  /// `tasker.sync:` and the SHA-256 of the database's canonical path in hex.
  public static func itemName(forDatabase canonicalPath: String) -> String {
    "tasker.sync:" + SHA256.hash(data: Array(canonicalPath.utf8)).description
  }

  /// The device-only item that holds the WebDAV password of this database's target.
  public static func passwordItemName(forDatabase canonicalPath: String) -> String {
    "tasker.sync-password:" + SHA256.hash(data: Array(canonicalPath.utf8)).description
  }

  /// The device-only item that holds this device's box secret key for this database's target.
  public static func boxItemName(forDatabase canonicalPath: String) -> String {
    "tasker.sync-box:" + SHA256.hash(data: Array(canonicalPath.utf8)).description
  }

  /// The folder or URL, for messages.
  public var location: String {
    switch target {
    case .folder(let folder): return folder
    case .webdav(let url, _, _): return url
    }
  }

  /// The storage root, for messages.
  public var root: String {
    switch target {
    case .folder(let folder): return folder + "/tasker-sync"
    case .webdav(let url, _, _): return (url.hasSuffix("/") ? url : url + "/") + "tasker-sync/"
    }
  }

  /// The record's bytes for the database at `canonicalPath`.
  public func encoded(database canonicalPath: String) -> [UInt8] {
    var lines = [Self.versionLine]
    switch target {
    case .folder(let folder): lines.append("target folder \(folder)")
    case .webdav(let url, let user, let caFile):
      lines.append("target webdav \(url)")
      lines.append(user.map { "auth basic \($0)" } ?? "auth none")
      lines.append(caFile.map { "ca file \($0)" } ?? "ca system")
    }
    lines += ["target-id \(targetID)", "device \(device)", "name \(name)", "database \(canonicalPath)"]
    return Array((lines.joined(separator: "\n") + "\n").utf8)
  }

  /// Reads a record, checking it belongs to the database at `canonicalPath`.
  ///
  /// - Throws: `SyncOutcome.malformed`, `.unsupportedVersion`, `.wrongDatabase`.
  public init(reading bytes: [UInt8], database canonicalPath: String) throws(SyncOutcome) {
    guard bytes.count <= Self.maximumByteCount, bytes.last == UInt8(ascii: "\n"),
      let text = String(validating: bytes, as: UTF8.self)
    else { throw .malformed }
    let lines = text.utf8.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
      .map { String(decoding: $0, as: UTF8.self) }
    if let first = lines.first, first.hasPrefix(Self.formatPrefix), first != Self.versionLine {
      let version = first.dropFirst(Self.formatPrefix.count)
      if !version.isEmpty && version.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
        throw .unsupportedVersion
      }
    }
    guard lines.count >= 6, lines[0] == Self.versionLine,
      !text.unicodeScalars.contains(where: { $0 != "\n" && SyncPayload.isControl($0) })
    else { throw .malformed }
    func value(_ line: String, _ prefix: String) throws(SyncOutcome) -> String {
      guard line.hasPrefix(prefix), line.utf8.count > prefix.utf8.count, !line.hasSuffix(" ") else {
        throw .malformed
      }
      return String(line.dropFirst(prefix.count))
    }
    var rest = lines[1...]
    if lines[1].hasPrefix("target webdav ") {
      guard lines.count == 8 else { throw .malformed }
      let url = try value(lines[1], "target webdav ")
      let user: String? = lines[2] == "auth none" ? nil : try value(lines[2], "auth basic ")
      let caFile: String? = lines[3] == "ca system" ? nil : try value(lines[3], "ca file ")
      guard url.hasPrefix("https://") || url.hasPrefix("http://"), !url.contains(" "),
        user.map({ $0.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f && $0 != UInt8(ascii: ":") } }) ?? true,
        caFile.map({ $0.hasPrefix("/") }) ?? true
      else { throw .malformed }
      target = .webdav(url: url, user: user, caFile: caFile)
      rest = lines[4...]
    } else {
      guard lines.count == 6 else { throw .malformed }
      let folder = try value(lines[1], "target folder ")
      guard folder.hasPrefix("/") else { throw .malformed }
      target = .folder(folder)
      rest = lines[2...]
    }
    let common = Array(rest)
    targetID = try value(common[0], "target-id ")
    device = try value(common[1], "device ")
    name = try value(common[2], "name ")
    let database = try value(common[3], "database ")
    guard database.hasPrefix("/"), SyncHex.isID(targetID), SyncHex.isID(device),
      (1...64).contains(name.unicodeScalars.count), !name.unicodeScalars.contains(where: SyncPayload.isControl)
    else { throw .malformed }
    guard database == canonicalPath else { throw .wrongDatabase }
  }
}
