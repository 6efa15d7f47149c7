import Glibc

/// Every way a TaskSystem call can fail: a system call that returned an
/// error, or a file or directory refused because it is not safe to trust.
///
/// Each case names the path; none carries file contents. Higher modules
/// wrap this error (for example `TaskVaultError.system`) rather than copy
/// its cases.
public enum SystemError: Error, Equatable, Sendable {
  /// A system call failed: which call, on which path, with which errno.
  case failed(call: String, path: String, errno: Int32)
  /// A file or directory that must be private is readable or writable by
  /// group or others; `fix` is the command that repairs it.
  case loosePermissions(path: String, mode: UInt32, fix: String)
  /// A file or directory that must be private belongs to another user.
  case notOwner(path: String)
  /// A path component is a symbolic link owned by someone other than the
  /// user or root, so its target cannot be trusted.
  case untrustedSymlink(path: String)
  /// A path that must be a regular file or a directory is something else
  /// (a symlink where none is allowed, a device, a directory).
  case wrongFileType(path: String, expected: String)
  /// A file (or stream) is larger than the limit its reader accepts.
  case tooLarge(path: String, byteCount: Int, limit: Int)
  /// The in-memory runtime directory for session keys cannot be used.
  case runtimeDirectoryUnavailable(reason: String)
  /// Text that is not an IP address literal with a port.
  case invalidAddress(text: String, reason: String)
  /// A network operation (`accept`, `connect`, `receive`, `send`) did not
  /// finish before its deadline.
  case timedOut(operation: String, peer: String)
  /// The peer closed the connection before the bytes expected arrived.
  case connectionClosed(peer: String)

  /// The path the error is about (empty when it is about no path).
  public var path: String {
    switch self {
    case .failed(_, let path, _), .loosePermissions(let path, _, _), .notOwner(let path),
      .untrustedSymlink(let path), .wrongFileType(let path, _), .tooLarge(let path, _, _):
      return path
    case .runtimeDirectoryUnavailable, .invalidAddress, .timedOut, .connectionClosed: return ""
    }
  }

  /// True for a refusal on safety grounds (mode, owner, symlink, file
  /// type), as opposed to a failed call or a size limit.
  public var isRefusal: Bool {
    switch self {
    case .loosePermissions, .notOwner, .untrustedSymlink, .wrongFileType: return true
    case .failed, .tooLarge, .runtimeDirectoryUnavailable, .invalidAddress, .timedOut, .connectionClosed: return false
    }
  }

  /// True when a call failed because the path does not exist (ENOENT).
  public var isNotFound: Bool {
    if case .failed(_, _, let code) = self { return code == ENOENT }
    return false
  }

  /// True when a call failed because the path already exists (EEXIST).
  public var isAlreadyExisting: Bool {
    if case .failed(_, _, let code) = self { return code == EEXIST }
    return false
  }

  /// The error of a call that found nothing at `path` (ENOENT).
  public static func notFound(_ path: String, call: String = "open") -> SystemError {
    .failed(call: call, path: path, errno: ENOENT)
  }

  /// The `strerror` text of an errno value followed by the number, for
  /// messages: `No such file or directory (errno 2)`.
  public static func describe(errno code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return "\(String(cString: text)) (errno \(code))"
  }
}

extension SystemError: CustomStringConvertible {
  /// One line that says what went wrong.
  public var description: String {
    switch self {
    case .failed(let call, let path, let code): return "\(call) failed on '\(path)': \(Self.describe(errno: code))"
    case .loosePermissions(let path, let mode, _):
      return "'\(path)' has mode \(String(mode, radix: 8)); it must be private to you (no group or other access)"
    case .notOwner(let path): return "'\(path)' is not owned by you"
    case .untrustedSymlink(let path): return "'\(path)' is a symbolic link owned by another user"
    case .wrongFileType(let path, let expected): return "'\(path)' is not \(expected)"
    case .tooLarge(let path, let count, let limit):
      return "'\(path)' holds \(count) bytes or more, above the limit of \(limit) bytes"
    case .runtimeDirectoryUnavailable(let reason): return reason
    case .invalidAddress(let text, let reason): return "'\(text)' is not an address to use: \(reason)"
    case .timedOut(let operation, let peer):
      return peer.isEmpty ? "\(operation) timed out" : "\(operation) with \(peer) timed out"
    case .connectionClosed(let peer): return "\(peer) closed the connection early"
    }
  }

  /// What to do next, when the error itself says it.
  public var hint: String? {
    switch self {
    case .loosePermissions(_, _, let fix): return "run: \(fix)"
    case .notOwner(let path): return "run as the user who owns '\(path)'"
    case .runtimeDirectoryUnavailable: return "make sure /dev/shm is a tmpfs owned by root with mode 1777"
    default: return nil
    }
  }
}

/// Calls a system call until it does not fail with EINTR; a negative
/// result with any other errno becomes `SystemError.failed`.
@discardableResult
func retrying<T: BinaryInteger>(_ call: String, _ path: String, _ body: () -> T) throws -> T {
  while true {
    let result = body()
    if result >= 0 { return result }
    let code = errno
    if code == EINTR { continue }
    throw SystemError.failed(call: call, path: path, errno: code)
  }
}
