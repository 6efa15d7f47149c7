import Foundation
import TaskVault

/// `Vectors/unlock-session-v2.json`: session files and session key files
/// as bytes, decided by `UnlockSessionVectors` inside TaskVault with the
/// reader every command uses, without files.
enum UnlockSessionVectorChecker: VectorChecker {
  static let formats = [UnlockSessionVectors.format]
  static let versions = [UnlockSessionVectors.version]

  static func check(_ data: Data, path: String, into report: inout VectorReport) throws {
    guard let result = try UnlockSessionVectors.check(data) else {
      report.fail("not an unlock-session version 2 vector file")
      return
    }
    // UnlockSessionVectors reports one line per failed case.
    report.passed += result.cases - result.failures.count
    report.failed += result.failures.count
    report.failures += result.failures
  }
}
