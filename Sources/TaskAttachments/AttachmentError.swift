import TaskCrypto
import TaskSystem

/// Every way an attachment operation can fail.
///
/// Each case names one cause; none carries plaintext or key bytes, so an
/// error may be logged or shown as it is.
public enum AttachmentError: Error, Equatable, Sendable {
  /// A cryptographic check failed: the chunked payload's header, a chunk, or
  /// the key (for example `.commitmentMismatch`, `.chunkAuthenticationFailed`,
  /// `.trailingData`, `.unknownKeyID`); see `TaskCryptoError`.
  case crypto(TaskCryptoError)
  /// The file starts with the attachment magic but ends inside the 13-byte
  /// wrapper: it was truncated. It is never taken for a plain file.
  case truncatedWrapper(byteCount: Int)
  /// The wrapper names a format version this build cannot read.
  case unsupportedVersion(UInt8)
  /// `rewrap` was given a plain file; only sealed attachments rewrap.
  case notSealed(path: String)
  /// The destination already exists; attachments never overwrite a file
  /// they did not create.
  case destinationExists(path: String)
  /// The settings file is not one of the two lines this build writes.
  case malformedSettings(path: String)
  /// A file operation failed or a file was refused (which call, which
  /// path, which errno); see `SystemError`.
  case system(SystemError)
}

extension AttachmentError {
  /// A stable snake_case name for the cause, used in `--json` reports and
  /// in the `expect` fields of `Vectors/attachment-v1.json`.
  public var code: String {
    switch self {
    case .crypto(let error): return error.code
    case .truncatedWrapper: return "truncated_wrapper"
    case .unsupportedVersion: return "unsupported_version"
    case .notSealed: return "not_sealed"
    case .destinationExists: return "destination_exists"
    case .malformedSettings: return "malformed_settings"
    case .system: return "io_error"
    }
  }
}

extension AttachmentError: CustomStringConvertible {
  /// A one-line message that says what went wrong and what to do next.
  public var description: String {
    switch self {
    case .crypto(let error): return error.description
    case .truncatedWrapper(let count):
      return "truncated attachment: \(count) bytes end inside the 13-byte wrapper; restore the file from a copy"
    case .unsupportedVersion(let version):
      return "unsupported attachment format version \(version); this build reads version 1 only, upgrade TaskKey"
    case .notSealed(let path): return "'\(path)' is a plain file, not a sealed attachment; seal it instead"
    case .destinationExists(let path): return "'\(path)' already exists; choose another path or remove it first"
    case .malformedSettings(let path):
      return "'\(path)' is not an attachment settings file ('seal-new-attachments=on' or '=off')"
    case .system(let error): return error.description
    }
  }
}

/// Runs `body`, turning a TaskCrypto error into an attachment error.
func attachmentCall<T>(_ body: () throws -> T) throws -> T {
  do {
    return try body()
  } catch let error as TaskCryptoError {
    throw AttachmentError.crypto(error)
  }
}
