import Foundation
import TaskAttachments
import TaskCrypto

/// The attachment checkers of `taskkey vectors check`: TaskKey's own
/// wrapper vectors (`Vectors/attachment-v1.json`) and the published
/// Cobblestone vectors of the C2SP chunked-encryption standard (Wycheproof
/// files of `c2sp_chunked_encryption_schema.json`).
enum AttachmentVectorCheck {
  /// The formats these checkers read.
  static let formats = [AttachmentVectors.format, "wycheproof Cobblestone"]

  /// The report for `data`, or nil when it is neither kind of file.
  static func report(data: Data, path: String) -> VectorChecker.FileReport? {
    if let result = ChunkedEncryptionVectors.check(data) {
      return VectorChecker.FileReport(
        path: path, format: "wycheproof Cobblestone", cases: result.cases, failures: result.failures,
        skipped: result.skipped)
    }
    if let result = AttachmentVectors.check(data) {
      return VectorChecker.FileReport(
        path: path, format: AttachmentVectors.format, cases: result.cases, failures: result.failures)
    }
    return nil
  }
}
