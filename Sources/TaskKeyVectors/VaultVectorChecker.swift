import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskVault

/// `Vectors/vault-v1.json`: the vault file and sync bundle vectors. The
/// binary files it names live in the directory `files` beside it.
struct VaultVectorFile: Codable, Equatable {
  /// What the good vault holds (and which items its bundle carries).
  struct Expected: Codable, Equatable {
    /// One note key, hex.
    struct Key: Codable, Equatable {
      var id: String
      var key: String
    }
    /// One item; `value` is UTF-8 text.
    struct Item: Codable, Equatable {
      var name: String
      var label: String
      var `class`: String
      var created: Int64
      var modified: Int64
      var value: String
    }
    var vaultID: String
    var kdf: String
    var generation: UInt64
    var primaryKeyID: String
    var noteKeys: [Key]
    /// Ids of retired note keys the synchronisable store remembers.
    var retiredKeyIDs: [String]
    var items: [Item]
    var syncBundleItems: [String]
  }

  /// One case: open `file` as `kind` (`vault` or `sync`) with `passphrase`;
  /// `expect` is one of success, wrong_passphrase, damaged, tampered,
  /// unsupported_version.
  struct Case: Codable, Equatable {
    var id: Int
    var file: String
    /// For `vault`: the device-only file opened with it, if any.
    var deviceFile: String?
    var kind: String
    var passphrase: String
    var expect: String
    var comment: String
  }

  var format = "vault"
  var version = 1
  var description: String
  var files: String
  var expected: Expected
  var tests: [Case]
}

/// `Vectors/vault-v1.json`: vault files, device-only files and sync
/// bundles, opened with `VaultFileReader` (nothing written, nothing
/// unlocked). `success` only when every key and item matches `expected`.
enum VaultVectorChecker: VectorChecker {
  static let formats = ["vault"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(VaultVectorFile.self, from: data)
    let directory = VectorVerdict.directory(file.files, besideFileAt: path)
    VectorVerdict.checkFileCases(
      file.tests, in: directory, into: &report, id: \.id, file: \.file, expect: \.expect
    ) { test, bytes in
      var deviceBytes: [UInt8]?
      if let deviceFile = test.deviceFile {
        guard let read = FileManager.default.contents(atPath: directory.appendingPathComponent(deviceFile).path) else {
          throw VectorCheckError.caseFileUnreadable(path: deviceFile)
        }
        deviceBytes = [UInt8](read)
      }
      return outcome(of: test, bytes: bytes, deviceBytes: deviceBytes, expected: file.expected)
    }
  }

  /// Opens one case and names its outcome from the closed set; `success`
  /// only when every key and item matches `expected`.
  static func outcome(
    of test: VaultVectorFile.Case, bytes: [UInt8], deviceBytes: [UInt8]?, expected: VaultVectorFile.Expected
  ) -> String {
    do {
      let passphrase = try Array(test.passphrase.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
      switch test.kind {
      case "vault":
        let contents = try VaultFileReader.openVaultFile(bytes, deviceOnlyFile: deviceBytes, passphrase: passphrase)
        guard contents.vaultID == expected.vaultID, contents.generation == expected.generation,
          "\(contents.kdfParameters)" == expected.kdf
        else { return "mismatch: header" }
        let names = expected.items.filter { deviceBytes != nil || $0.class == "after-first-unlock" }.map(\.name)
        return compare(contents, expected: expected, names: names)
      case "sync":
        let contents = try VaultFileReader.openSyncBundle(bytes, passphrase: passphrase)
        guard contents.vaultID == expected.vaultID else { return "mismatch: header" }
        return compare(contents, expected: expected, names: expected.syncBundleItems)
      default:
        return "unknown kind '\(test.kind)'"
      }
    } catch let error as TaskVaultError {
      return outcome(of: error)
    } catch {
      return "error: \(error)"
    }
  }

  /// The outcome name of a vault error, from the closed set.
  static func outcome(of error: TaskVaultError) -> String {
    switch error {
    case .wrongPassphrase: return "wrong_passphrase"
    case .damaged: return "damaged"
    case .tampered: return "tampered"
    case .unsupportedVersion: return "unsupported_version"
    default: return "error: \(error)"
    }
  }

  private static func compare(_ contents: VaultContents, expected: VaultVectorFile.Expected, names: [String]) -> String
  {
    let keyring = contents.noteKeyring
    guard keyring.primaryID.hex == expected.primaryKeyID,
      keyring.keys.map(\.id.hex) == expected.noteKeys.map(\.id),
      keyring.keys.map({ key in key.key.withUnsafeBytes { VectorVerdict.hex(Array($0)) } })
        == expected.noteKeys.map(\.key)
    else { return "mismatch: note keys" }
    guard contents.retiredKeyIDs.map(\.hex) == expected.retiredKeyIDs else { return "mismatch: retired key ids" }
    guard contents.items.map(\.attributes.name) == names else { return "mismatch: item names" }
    for item in contents.items {
      guard let want = expected.items.first(where: { $0.name == item.attributes.name }) else { return "mismatch: item" }
      let value = item.value.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
      let attributes = item.attributes
      guard value == want.value, attributes.label == want.label, attributes.itemClass.rawName == want.class,
        Int64(attributes.created.timeIntervalSince1970) == want.created,
        Int64(attributes.modified.timeIntervalSince1970) == want.modified
      else { return "mismatch: item \(want.name)" }
    }
    return "success"
  }

}
