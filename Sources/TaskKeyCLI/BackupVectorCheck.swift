import BackupRules
import Foundation
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

/// Checks `Vectors/backup-v1.json` with `BackupRules.inspect`: nothing is
/// written or restored.
enum BackupVectorCheck {
  /// Checks every case of the file at `path`.
  ///
  /// - Returns: the number of cases and one line per failure.
  static func check(data: Data, path: String) -> (cases: Int, failures: [String]) {
    let file: BackupVectorFile
    do {
      file = try JSONDecoder().decode(BackupVectorFile.self, from: data)
    } catch {
      return (0, ["malformed backup vector file: \(error)"])
    }
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(file.files)
    let failures = VectorChecker.checkFileCases(
      file.tests, in: directory, id: \.id, file: \.file, expect: \.expect
    ) { test, bytes in
      .success(outcome(of: test, bytes: bytes, expected: file.expected))
    }
    return (file.tests.count, failures)
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
      case .wrongPassphrase: return "wrong_passphrase"
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
