import AssistantKeys
import CommandKit
import FoundationEssentials

/// `Vectors/assistant-key-v1.json`, `Vectors/assistant-registry-v1.json`,
/// `Vectors/assistant-registry-v2.json`, `Vectors/assistant-last-used-v1.json` and
/// `Vectors/assistant-last-used-v2.json`:
/// decided by `AssistantKeyVectors` inside the AssistantKeys module, with the
/// same parser and decision code that `verify` uses, without the disk.
enum AssistantKeyVectorChecker: VectorChecker {
  static let formats = AssistantKeyVectors.formats
  /// Version 1 of every format, and version 2 of the registry and the
  /// last-used file (the module's checker refuses any other pairing).
  static let versions = [1, 2]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    guard let result = AssistantKeyVectors.check(data) else { return report.fail("not an assistant-key vector file") }
    report.add(cases: result.cases, failures: result.failures)
  }
}
