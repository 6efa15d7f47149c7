import BackupRules
import CommandKit
import FoundationEssentials
import TaskCrypto

/// `Vectors/backup-v1.json`: the backup file vectors. The files it names
/// live in the directory `files` beside it.
struct BackupVectorFile: Codable, Equatable {
  /// What the good backup holds.
  struct Expected: Codable, Equatable {
    var vaultID: String
    var generation: UInt64
    var created: Int64
    var noteKeyCount: Int
    var items: [String]
  }
  /// One case: open `file` with `passphrase`; `expect` is one of success,
  /// wrong_passphrase, damaged, tampered, unsupported_version.
  struct Case: Codable, Equatable {
    var id: Int
    var file: String
    var passphrase: String
    var expect: String
    var comment: String
  }
  var format = "backup"
  var version = 1
  var description: String
  var files: String
  var expected: Expected
  var tests: [Case]
}

/// `Vectors/backup-v1.json`: backup files, opened with
/// `BackupRules.inspect` (nothing written or restored).
enum BackupVectorChecker: VectorChecker {
  static let formats = ["backup"]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    let file = try JSONDecoder().decode(BackupVectorFile.self, from: data)
    VectorVerdict.checkFileCases(
      file.tests, in: VectorVerdict.directory(file.files, besideFileAt: path), into: &report, id: \.id,
      file: \.file, expect: \.expect
    ) { test, bytes in
      outcome(of: test, bytes: bytes, expected: file.expected)
    }
  }

  /// Opens one case and names its outcome from the closed set.
  static func outcome(of test: BackupVectorFile.Case, bytes: [UInt8], expected: BackupVectorFile.Expected) -> String {
    do {
      let passphrase = try Array(test.passphrase.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
      let summary = try BackupRules.inspect(bytes, passphrase: passphrase, path: test.file)
      guard summary.vaultID == expected.vaultID, summary.generation == expected.generation,
        summary.created == expected.created, summary.noteKeyCount == expected.noteKeyCount,
        summary.itemNames == expected.items
      else { return "mismatch" }
      return "success"
    } catch let error as BackupError {
      switch error {
      case .vault(let inner): return VaultVectorChecker.outcome(of: inner)
      case .damaged: return "damaged"
      case .tampered: return "tampered"
      case .unsupportedVersion: return "unsupported_version"
      default: return "error: \(error)"
      }
    } catch {
      return "error: \(error)"
    }
  }
}
