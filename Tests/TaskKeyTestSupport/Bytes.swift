import Foundation
import TaskCrypto

/// A passphrase or value in locked memory, for tests.
public func secret(_ text: String) -> SecureBytes {
  try! Array(text.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
}

/// The bytes of a `SecureBytes`, for assertions only.
public func bytes(of value: SecureBytes) -> [UInt8] {
  value.withUnsafeBytes { Array($0) }
}

/// Whether `needle` occurs in `haystack`.
public func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
  guard !needle.isEmpty, haystack.count >= needle.count else { return false }
  for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
    if Array(haystack[start..<(start + needle.count)]) == needle { return true }
  }
  return false
}

/// Recomputes the trailing SHA-256 checksum of a vault-family file after a
/// test changed a byte, so the change reaches the authenticated checks.
public func fixChecksum(_ bytes: [UInt8]) -> [UInt8] {
  let body = Array(bytes[..<(bytes.count - 32)])
  return body + SHA256.hash(data: body).bytes
}

/// The whole content of the file at `path`.
///
/// - Throws: Foundation's error when the file cannot be read.
public func fileBytes(_ path: String) throws -> [UInt8] {
  [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}
