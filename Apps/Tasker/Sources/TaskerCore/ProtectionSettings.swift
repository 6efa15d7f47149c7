import FoundationEssentials
import TaskCrypto

/// Whether Tasker seals what it stores: the two protection settings.
///
/// They are never read from the database. A database writer could
/// otherwise turn sealing off (`insert into settings values
/// ('body-encryption','off')`) and every later note would be stored plain
/// without a word. They live in the user's TaskKey vault instead, as one
/// device-only item per database (`ProtectionRecord`, format in
/// docs/formats/protection-settings.md); a database with nothing recorded
/// gets `defaults`.
public struct ProtectionSettings: Sendable, Equatable, Codable {
  /// Whether new note text and page bodies are sealed.
  public var bodyEncryption: Bool
  /// Whether new attachment files are sealed.
  public var attachmentEncryption: Bool

  /// What a database with nothing recorded gets: bodies sealed, attachments plain.
  public static let defaults = ProtectionSettings(bodyEncryption: true, attachmentEncryption: false)

  /// Both on: what `tasker settings set` keeps for the setting it is not
  /// changing when the recorded item cannot be read.
  public static let strongest = ProtectionSettings(bodyEncryption: true, attachmentEncryption: true)

  /// Settings with the given values.
  public init(bodyEncryption: Bool, attachmentEncryption: Bool) {
    self.bodyEncryption = bodyEncryption
    self.attachmentEncryption = attachmentEncryption
  }
}

/// Why a protection record was refused, by outcome name (the names the
/// vectors in Apps/Tasker/Vectors/protection-settings-v1.json use).
public enum ProtectionRecordProblem: String, Error, Sendable, Equatable {
  /// The first line names another version of the format.
  case unsupportedVersion = "unsupported_version"
  /// The bytes are not a version 1 record.
  case malformed
  /// The record is well formed but names another database.
  case wrongDatabase = "wrong_database"
}

/// The vault item that records one database's protection settings: four
/// LF-terminated lines of UTF-8, nothing else.
///
///     tasker-protection 1
///     body-encryption on|off
///     attachment-encryption on|off
///     database <the canonical path of the database file>
///
/// It is stored under `itemName(forDatabase:)` in the vault's device-only
/// store, so the vault encrypts and authenticates it and it never leaves
/// the device. The fourth line binds the value to its database: a record
/// copied to another item's name is refused.
public enum ProtectionRecord {
  /// The first line of version 1.
  static let versionLine = "tasker-protection 1"

  /// The prefix every record's first line starts with, whatever its version.
  static let formatPrefix = "tasker-protection "

  /// The longest record read: 8 KiB (a 4,096-byte path and the fixed lines fit).
  public static let maximumByteCount = 8 << 10

  /// `tasker.protection:` and the 64 lowercase hex digits of the SHA-256
  /// of the database's canonical path (82 bytes, inside the vault's
  /// 128-byte name limit and its name alphabet).
  public static func itemName(forDatabase canonicalPath: String) -> String {
    "tasker.protection:" + SHA256.hash(data: Array(canonicalPath.utf8)).description
  }

  /// The record for `settings` of the database at `canonicalPath`.
  public static func encode(_ settings: ProtectionSettings, database canonicalPath: String) -> [UInt8] {
    func word(_ on: Bool) -> String { on ? "on" : "off" }
    return Array(
      """
      \(versionLine)
      body-encryption \(word(settings.bodyEncryption))
      attachment-encryption \(word(settings.attachmentEncryption))
      database \(canonicalPath)

      """.utf8)
  }

  /// Reads a record, checking that it belongs to the database at `canonicalPath`.
  ///
  /// Rules, in order: at most `maximumByteCount` bytes, valid UTF-8 and
  /// ending in LF, else `malformed`; a first line of `tasker-protection `
  /// and ASCII digits other than `tasker-protection 1` is
  /// `unsupportedVersion`; then exactly four lines as above with `on` or
  /// `off` spelled in lower case and no other bytes (no CR, no spaces
  /// added), else `malformed`; a fourth line naming another path is
  /// `wrongDatabase`.
  ///
  /// - Throws: `ProtectionRecordProblem`.
  public static func decode(_ bytes: [UInt8], database canonicalPath: String) throws(ProtectionRecordProblem)
    -> ProtectionSettings
  {
    guard bytes.count <= maximumByteCount, bytes.last == UInt8(ascii: "\n"),
      String(validating: bytes, as: UTF8.self) != nil
    else { throw .malformed }
    // Split on the LF byte: a CR stays inside its line and fails the comparisons below.
    let lines = bytes.dropLast().split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    func line(_ line: ArraySlice<UInt8>, is text: String) -> Bool { line.elementsEqual(text.utf8) }
    if let first = lines.first, first.starts(with: formatPrefix.utf8), !line(first, is: versionLine) {
      let version = first.dropFirst(formatPrefix.utf8.count)
      if !version.isEmpty && version.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
        throw .unsupportedVersion
      }
    }
    guard lines.count == 4, line(lines[0], is: versionLine) else { throw .malformed }
    func flag(_ value: ArraySlice<UInt8>, _ name: String) throws(ProtectionRecordProblem) -> Bool {
      if line(value, is: name + " on") { return true }
      if line(value, is: name + " off") { return false }
      throw .malformed
    }
    let settings = ProtectionSettings(
      bodyEncryption: try flag(lines[1], "body-encryption"),
      attachmentEncryption: try flag(lines[2], "attachment-encryption"))
    let databasePrefix = Array("database ".utf8)
    guard lines[3].starts(with: databasePrefix), lines[3].count > databasePrefix.count else { throw .malformed }
    guard lines[3].dropFirst(databasePrefix.count).elementsEqual(canonicalPath.utf8) else { throw .wrongDatabase }
    return settings
  }
}
