import CommandKit
import FoundationEssentials
import TaskCrypto

/// A checker for one family of vector files: every checker behind
/// `taskkey vectors check` conforms to it, and `VectorCheck.checkers` lists
/// them all. A checker counts each case it runs as passed or failed, and
/// names each case or group it skips, with how many cases that is.
protocol VectorChecker {
  /// The names this checker reports as the file's format (for `--help`,
  /// errors and the JSON output).
  static var formats: [String] { get }

  /// The format versions this checker reads (1 unless said otherwise).
  static var versions: [Int] { get }

  /// Whether this checker reads a file with this header.
  static func accepts(_ header: VectorFileHeader) -> Bool

  /// Runs every case of one file.
  ///
  /// - Parameters:
  ///   - data: the file's bytes (JSON).
  ///   - path: the file's path, to find the binary files it names.
  ///   - readers: the command's own file readers, for the families that
  ///     check them (key files, passphrase files); the others ignore it.
  ///   - report: where each case's verdict and each skip is recorded.
  /// - Throws: a decoding error when the file does not follow its schema
  ///   (reported as a malformed vector file, one failure).
  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws
}

extension VectorChecker {
  /// Version 1, unless the checker says otherwise.
  static var versions: [Int] { [1] }

  /// TaskKey's own files: the `format` field names the format, at version 1.
  static func accepts(_ header: VectorFileHeader) -> Bool {
    guard let format = header.format else { return false }
    return formats.contains(format)
  }
}

/// The file readers of the command under test that two vector families
/// run their cases through, so that the command's own code is what is
/// checked: the key-file reader (`Vectors/key-file-v1.json`) and the
/// passphrase-file reader (`Vectors/passphrase-bytes-v1.json`). They live
/// in the command, which links this target, so the command hands them in.
public struct VectorFileReaders {
  /// Reads the key file at a path as `seal|open --key-file` does.
  public var keyFile: (String) throws -> NoteKey
  /// Reads the passphrase file at a path as `--passphrase-file` does.
  public var passphraseFile: (String) throws -> SecureBytes

  /// The command's two readers.
  ///
  /// - Parameters:
  ///   - keyFile: reads a key file; throws what the command's reader
  ///     throws (`TaskCryptoError.malformedKeyFile`,
  ///     `SystemError.loosePermissions`, ...).
  ///   - passphraseFile: reads a passphrase file; throws what the
  ///     command's reader throws (`TaskVaultError.passphraseTooLong`, ...).
  public init(
    keyFile: @escaping (String) throws -> NoteKey, passphraseFile: @escaping (String) throws -> SecureBytes
  ) {
    self.keyFile = keyFile
    self.passphraseFile = passphraseFile
  }
}

/// The outcome of one vector file, counted per case.
public struct VectorReport: Equatable, Sendable {
  /// The file's path as given.
  public var path: String
  /// The format the checker reports, or nil when no checker read the file.
  public var format: String?
  /// Cases that gave their expected outcome.
  public var passed = 0
  /// Cases that did not, plus one for a file that could not be read at all.
  public var failed = 0
  /// Cases not run because this build does not use their parameters.
  public var skipped = 0
  /// One line per failed case or file-level defect.
  public var failures: [String] = []
  /// One line per skipped group or case, naming it and its case count.
  public var skippedGroups: [String] = []

  /// An empty report for the file at `path`.
  public init(path: String) {
    self.path = path
  }

  /// True when no case failed.
  public var isPassing: Bool { failed == 0 }

  /// Records one case: passed when `failure` is nil, else failed with that line.
  mutating func record(_ failure: String?) {
    if let failure {
      failed += 1
      failures.append(failure)
    } else {
      passed += 1
    }
  }

  /// Records a file-level defect (unreadable, unknown format, malformed).
  mutating func fail(_ reason: String) {
    record(reason)
  }

  /// Adds the outcome of a checker that reports per file (assistant keys,
  /// attachments, sync import, unlock session, Cobblestone): how many
  /// cases ran, and one line per failed case.
  mutating func add(cases: Int, failures: [String]) {
    passed += max(0, cases - failures.count)
    failed += failures.count
    self.failures += failures
  }

  /// Records `count` cases skipped, under one named line.
  mutating func skip(_ description: String, count: Int) {
    skipped += count
    skippedGroups.append(description)
  }
}

/// Checks vector files against this build: the engine behind
/// `taskkey vectors check` and the tests that run every file in `Vectors/`.
///
/// The TaskKeyVectors module holds every vector checker of the project and
/// the vector files' schemas (which the generators in the tests share), so
/// that no shipped library carries test-only code; it is a target, not a
/// library product, linked by `taskkey` and the tests only. Where a checker
/// must run a library's internal reader (the session reader, the sync
/// merge, the registry's verify search, the chunked AEAD's raw mode), the
/// library offers the smallest entry point as a documented `package`
/// declaration: the compiler lets only modules of the TaskKey package see
/// it, so no app that links the libraries can call a seam, and no seam is
/// in a module's public interface (`@_spi` would keep them public behind an
/// opt-in import anyone may write). ARCHITECTURE.md, "Package seams", lists
/// them.
public enum VectorCheck {
  /// Every checker this build has, in the order they are asked.
  static let checkers: [any VectorChecker.Type] = [
    AESGCMVectorChecker.self, Argon2idVectorChecker.self, SealedValueVectorChecker.self,
    VaultVectorChecker.self, BackupVectorChecker.self, AssistantKeyVectorChecker.self,
    KeyFileVectorChecker.self, WycheproofAEADVectorChecker.self, WycheproofMACVectorChecker.self,
    SyncImportVectorChecker.self, WycheproofHKDFVectorChecker.self, AttachmentVectorChecker.self,
    CobblestoneVectorChecker.self, UnlockSessionVectorChecker.self, PassphraseVectorChecker.self,
    CPaceVectorChecker.self,
    PairingVectorChecker.self,
  ]

  /// Every format name this build checks.
  public static var formats: [String] { checkers.flatMap { $0.formats } }

  /// Checks one file: finds the checker its header names and runs every
  /// case. Never throws: an unreadable, unknown or malformed file is one
  /// failure in the report.
  ///
  /// - Parameters:
  ///   - path: the vector file.
  ///   - readers: the command's key-file and passphrase-file readers.
  /// - Returns: the file's report.
  public static func check(path: String, readers: VectorFileReaders) -> VectorReport {
    var report = VectorReport(path: path)
    guard let data = FileManager.default.contents(atPath: path) else {
      report.fail("cannot read the file")
      return report
    }
    // The one strict reader first (CommandKit's JSONDocument: UTF-8, one
    // value, no repeated member at any depth, bounded depth, no lone
    // surrogate); the typed decoding below only maps a file it accepted.
    do {
      _ = try JSONDocument(parsing: Array(data))
    } catch let error as JSONError {
      report.fail("not JSON this reader accepts: \(error.reason)")
      return report
    } catch {
      report.fail("not JSON this reader accepts")
      return report
    }
    guard let header = try? JSONDecoder().decode(VectorFileHeader.self, from: data),
      header.format != nil || header.algorithm != nil
    else {
      report.fail("not a vector file: no 'format' and 'version' fields")
      return report
    }
    guard let checker = checkers.first(where: { $0.accepts(header) }) else {
      report.format = header.format ?? header.algorithm
      report.fail("unknown format '\(header.format ?? header.algorithm ?? "")' version \(header.version ?? 0)")
      return report
    }
    report.format = checker.formats.count == 1 ? checker.formats[0] : header.format
    if header.format != nil, !checker.versions.contains(header.version ?? 0) {
      report.fail("unknown format '\(header.format ?? "")' version \(header.version.map(String.init) ?? "none")")
      return report
    }
    do {
      try checker.check(data, path: path, readers: readers, into: &report)
    } catch {
      report.fail("malformed vector file: \(error)")
    }
    return report
  }
}
