/// Why a vector could not be judged, or what a reader did that no case
/// allows: the one error enum of the vectors target. A vector whose
/// outcome differs from its stated one is not an error but a failure line
/// in its file's `VectorReport`; these cases are the causes such lines name.
public enum VectorCheckError: Error, Equatable, Sendable {
  /// zlib refused a compressed vector field; `detail` is zlib's own
  /// message (for example "incorrect header check", or "incorrect data
  /// check" for a wrong Adler-32).
  case corruptCompressedStream(detail: String)
  /// A compressed vector field ends before its end marker and checksum.
  case truncatedCompressedStream
  /// Bytes follow the end of a compressed vector field.
  case trailingCompressedBytes(count: Int)
  /// A compressed vector field would decompress to more than `limit` bytes.
  case decompressedTooLarge(limit: Int)
  /// A streaming opener ended cleanly after it had failed.
  case cleanEndAfterFailure
  /// A random-access opener authenticated the length of an invalid
  /// message whose final chunk is not valid.
  case lengthNotRefused
  /// A file a case names could not be read (`path` as the case names it).
  case caseFileUnreadable(path: String)
}

extension VectorCheckError: CustomStringConvertible {
  /// One line for a failure report.
  public var description: String {
    switch self {
    case .corruptCompressedStream(let detail): "corrupt zlib stream (\(detail))"
    case .truncatedCompressedStream: "truncated zlib stream"
    case .trailingCompressedBytes(let count): "\(count) bytes after the zlib stream"
    case .decompressedTooLarge(let limit): "zlib output above \(limit) bytes"
    case .cleanEndAfterFailure: "clean end after a failure"
    case .lengthNotRefused: "length authenticated for a message whose final chunk is invalid"
    case .caseFileUnreadable(let path): "cannot read \(path)"
    }
  }
}
