import CommandKit
import FoundationEssentials
import TaskVault

/// `Vectors/sync-import-v1.json`: how a bundle merges into the
/// synchronisable store, decided by `SyncImportVectors` inside TaskVault
/// with the merge `sync import` runs, without files.
enum SyncImportVectorChecker: VectorChecker {
  static let formats = [SyncImportVectors.format]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    guard let result = try SyncImportVectors.check(data) else { return report.fail("not a sync-import vector file") }
    report.add(cases: result.cases, failures: result.failures)
  }
}
