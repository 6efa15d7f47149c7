import CommandKit
import FoundationEssentials
import TaskVault

/// `Vectors/unlock-session-v2.json`: session files and session key files
/// as bytes, decided by `UnlockSessionVectors` inside TaskVault with the
/// reader every command uses, without files.
enum UnlockSessionVectorChecker: VectorChecker {
  static let formats = [UnlockSessionVectors.format]
  static let versions = [UnlockSessionVectors.version]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    guard let result = try UnlockSessionVectors.check(data) else {
      return report.fail("not an unlock-session version 2 vector file")
    }
    report.add(cases: result.cases, failures: result.failures)
  }
}
