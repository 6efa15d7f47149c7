import CTaskSystem
import Glibc

/// User extended attributes on a path (never following a final symlink),
/// for the backup exclusion mark.
public enum ExtendedAttribute {
  /// What reading or writing an attribute found.
  public enum Outcome: Equatable, Sendable {
    /// The call succeeded (for `get`: with this value).
    case value([UInt8])
    /// The attribute is not set.
    case absent
    /// The file system does not support user extended attributes.
    case unsupported
    /// Another failure, with errno.
    case failed(errno: Int32)
  }

  /// Sets `name` to `value` on `path` (lsetxattr).
  ///
  /// - Returns: `.value(value)` on success, `.unsupported` for ENOTSUP,
  ///   else `.failed`.
  public static func set(_ name: String, _ value: [UInt8], on path: String) -> Outcome {
    let result = value.withUnsafeBytes { task_system_set_xattr(path, name, $0.baseAddress, UInt($0.count)) }
    if result == 0 { return .value(value) }
    return errno == ENOTSUP || errno == EOPNOTSUPP ? .unsupported : .failed(errno: errno)
  }

  /// Reads `name` on `path` (lgetxattr), at most 256 bytes.
  ///
  /// - Returns: `.value`, `.absent` (ENODATA), `.unsupported` or `.failed`.
  public static func get(_ name: String, on path: String) -> Outcome {
    var buffer = [UInt8](repeating: 0, count: 256)
    let count = buffer.withUnsafeMutableBytes { task_system_get_xattr(path, name, $0.baseAddress, UInt($0.count)) }
    if count >= 0 { return .value(Array(buffer[0..<count])) }
    switch errno {
    case ENODATA: return .absent
    case ENOTSUP, EOPNOTSUPP: return .unsupported
    default: return .failed(errno: errno)
    }
  }
}
