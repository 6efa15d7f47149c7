import TaskCrypto

/// A structural defect found while parsing; mapped to `.damaged`.
struct ParseFailure: Error {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}

/// Appends big-endian integers and bytes.
struct ByteWriter {
  var bytes = [UInt8]()

  mutating func u8(_ value: UInt8) { bytes.append(value) }
  mutating func u16(_ value: UInt16) { append(bigEndian: UInt64(value), count: 2) }
  mutating func u32(_ value: UInt32) { append(bigEndian: UInt64(value), count: 4) }
  mutating func u64(_ value: UInt64) { append(bigEndian: value, count: 8) }
  mutating func append(_ other: [UInt8]) { bytes += other }

  private mutating func append(bigEndian value: UInt64, count: Int) {
    for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }
}

/// Reads big-endian integers and byte runs, failing on any overrun.
struct ByteReader {
  let buffer: UnsafeRawBufferPointer
  private(set) var offset = 0

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  var remaining: Int { buffer.count - offset }

  mutating func take(_ count: Int, _ what: String) throws -> UnsafeRawBufferPointer {
    guard count >= 0, count <= remaining else { throw ParseFailure("truncated in \(what)") }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
  }

  mutating func bytes(_ count: Int, _ what: String) throws -> [UInt8] { Array(try take(count, what)) }

  /// The next `count` bytes without consuming them (`count` <= `remaining`).
  func peek(_ count: Int) -> [UInt8] { Array(buffer[offset..<(offset + count)]) }

  mutating func integer(_ count: Int, _ what: String) throws -> UInt64 {
    try take(count, what).reduce(0) { $0 << 8 | UInt64($1) }
  }

  mutating func u8(_ what: String) throws -> UInt8 { UInt8(try integer(1, what)) }
  mutating func u16(_ what: String) throws -> UInt16 { UInt16(try integer(2, what)) }
  mutating func u32(_ what: String) throws -> UInt32 { UInt32(try integer(4, what)) }
  mutating func u64(_ what: String) throws -> UInt64 { try integer(8, what) }
}

/// The first ten bytes of every TaskKey binary file: an 8-byte magic that
/// names the format, then the format version as a big-endian u16. The one
/// header codec of the vault file, the device-only file, the sync bundle,
/// the unlock session and the backup file; a reader checks it before
/// anything else, so a file of another format or version is refused with
/// the same two outcomes everywhere.
public struct FormatHeader: Sendable, Equatable {
  /// The 8-byte magic.
  public let magic: [UInt8]
  /// The version this build writes and reads.
  public let version: UInt16
  /// The format's name in messages ("vault file", "backup").
  public let name: String

  /// The header's length in bytes.
  public static let byteCount = 10

  /// A header; `magic` must be 8 bytes.
  public init(magic: String, version: UInt16, name: String) {
    let bytes = Array(magic.utf8)
    precondition(bytes.count <= 8, "a format magic is 8 bytes")
    self.magic = bytes + [UInt8](repeating: 0, count: 8 - bytes.count)
    self.version = version
    self.name = name
  }

  /// Why a file's first bytes are not this header.
  public enum Mismatch: Error, Equatable, Sendable {
    /// Too short, or the magic differs: not a file of this format.
    case notThisFormat(reason: String)
    /// The magic matches but the version is not the one this build reads.
    case unsupportedVersion(Int)
  }

  /// The ten header bytes.
  public var bytes: [UInt8] { magic + [UInt8(version >> 8), UInt8(version & 0xff)] }

  /// Checks the first ten bytes of `file`.
  ///
  /// - Returns: nil when they are this header, else what differs.
  public func mismatch(in file: [UInt8]) -> Mismatch? {
    guard file.count >= Self.byteCount, Array(file[0..<8]) == magic else {
      return .notThisFormat(reason: "not a TaskKey \(name) (bad magic)")
    }
    let found = Int(file[8]) << 8 | Int(file[9])
    return found == Int(version) ? nil : .unsupportedVersion(found)
  }

  /// The vault file `vault.tkv`, version 1.
  public static let vaultFile = FormatHeader(magic: "TKVAULT", version: 1, name: "vault file")
  /// The device-only file `device-only/device.tkv`, version 1.
  public static let deviceFile = FormatHeader(magic: "TKDEVICE", version: 1, name: "device-only file")
  /// The sync bundle, version 1.
  public static let syncBundle = FormatHeader(magic: "TKSYNC", version: 1, name: "sync bundle")
  /// The unlock session `device-only/unlock.session`, version 2 (version 1
  /// did not bind the vault header; a version-1 session reads as locked).
  public static let unlockSession = FormatHeader(magic: "TKUNLOCK", version: 2, name: "unlock session")
}

extension FormatHeader {
  /// Checks the header of a TaskVault file, as `TaskVaultError`.
  ///
  /// - Throws: `TaskVaultError.damaged` (not this format) or
  ///   `.unsupportedVersion`, naming `path`.
  func check(_ file: [UInt8], path: String) throws {
    switch mismatch(in: file) {
    case nil: return
    case .notThisFormat(let reason): throw TaskVaultError.damaged(path: path, reason: reason)
    case .unsupportedVersion(let version): throw TaskVaultError.unsupportedVersion(path: path, version: version)
    }
  }
}
