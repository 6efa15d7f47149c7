import CommandKit
import FoundationEssentials
import TaskAttachments
import TaskCrypto

/// `Vectors/attachment-v1.json`: TaskKey's own wrapper vectors, decided by
/// `AttachmentVectors` inside the TaskAttachments module with the same
/// stream reader that `taskkey attach open` uses.
enum AttachmentVectorChecker: VectorChecker {
  static let formats = [AttachmentVectors.format]

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    guard let result = AttachmentVectors.check(data) else { return report.fail("not an attachment vector file") }
    report.add(cases: result.cases, failures: result.failures)
  }
}

/// Wycheproof files of `c2sp_chunked_encryption_schema.json`: the published
/// Cobblestone vectors of the C2SP chunked-encryption standard, run by
/// `ChunkedEncryptionVectors` inside TaskCrypto through every opener path
/// and raw mode, with the flags honoured.
enum CobblestoneVectorChecker: VectorChecker {
  static let formats = ["wycheproof Cobblestone"]

  static func accepts(_ header: VectorFileHeader) -> Bool {
    header.format == nil && header.schema == ChunkedEncryptionVectors.schema
  }

  static func check(_ data: Data, path: String, readers: VectorFileReaders, into report: inout VectorReport) throws {
    guard let result = ChunkedEncryptionVectors.check(data) else {
      return report.fail("not a c2sp_chunked_encryption_schema file")
    }
    report.add(cases: result.cases, failures: result.failures)
    for group in result.skipped { report.skip(group.description, count: group.count) }
  }
}
