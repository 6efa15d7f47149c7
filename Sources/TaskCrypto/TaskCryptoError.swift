/// Every way a TaskCrypto operation can fail.
///
/// Each case names one cause; none carries secret bytes, so an error may be
/// logged or shown as it is.
public enum TaskCryptoError: Error, Equatable, Sendable {
  /// The authentication tag did not verify: the key, the nonce, the
  /// ciphertext, the tag or the associated data (context) is not the one
  /// that sealed it. Nothing of the plaintext is released.
  case authenticationFailed
  /// A key of the wrong size was offered; only 256-bit (32-byte) keys seal.
  case invalidKeySize(Int)
  /// A sealed value names a format version this build does not know.
  case unsupportedVersion(String)
  /// A sealed value names a key id that is not in the keyring.
  case unknownKeyID(KeyID)
  /// The payload of a sealed value is not canonical RFC 4648 base64 with
  /// padding (wrong alphabet, missing or extra padding, non-zero trailing
  /// bits, white space).
  case invalidBase64
  /// The decoded payload is shorter than nonce (12) plus tag (16) bytes.
  case truncated(byteCount: Int)
  /// The input exceeds a documented hard limit.
  case tooLarge(byteCount: Int, limit: Int)
  /// An opened value is not valid UTF-8 where text was asked for.
  case invalidUTF8
  /// A key id is not 8 lowercase hexadecimal digits.
  case invalidKeyID(String)
  /// A key file line is not `<8 hex kid>:<64 hex key>`; the reason says
  /// what is wrong without repeating the key.
  case malformedKeyFile(reason: String)
  /// A keyring already holds a key with this id.
  case duplicateKeyID(KeyID)
  /// The key is the keyring's primary and cannot be retired; promote
  /// another key first.
  case cannotRetirePrimary(KeyID)
  /// Passphrase-KDF costs, salt, passphrase or output length are outside
  /// the documented limits; the reason names the limit.
  case invalidKDFParameters(reason: String)
  /// The operating system refused to provide random bytes or locked memory.
  case resourceUnavailable(String)
  /// A cryptographic library call failed for a reason other than
  /// authentication (for example an allocation failure); names the call.
  case backendFailure(function: String)
}

extension TaskCryptoError: CustomStringConvertible {
  /// A one-line message that says what went wrong and what to do next.
  public var description: String {
    switch self {
    case .authenticationFailed:
      return "authentication failed: the value was altered, or the key or context is not the one that sealed it"
    case .invalidKeySize(let count):
      return "invalid key size: \(count) bytes; AES-256-GCM keys are exactly 32 bytes"
    case .unsupportedVersion(let version):
      return "unsupported sealed-value version 'tc\(version)'; this build reads version 1 only, upgrade TaskKey"
    case .unknownKeyID(let kid):
      return "unknown key id \(kid): the keyring has no key with this id (retired, or from another vault)"
    case .invalidBase64:
      return "malformed sealed value: the payload is not canonical base64"
    case .truncated(let count):
      return "malformed sealed value: payload of \(count) bytes is shorter than nonce and tag (28 bytes)"
    case .tooLarge(let count, let limit):
      return "input of \(count) bytes exceeds the limit of \(limit) bytes"
    case .invalidUTF8:
      return "the opened value is not valid UTF-8 text"
    case .invalidKeyID(let text):
      return "invalid key id '\(text.prefix(16))': expected 8 lowercase hexadecimal digits"
    case .malformedKeyFile(let reason):
      return "malformed key file: \(reason); expected one line '<8 hex kid>:<64 hex key>'"
    case .duplicateKeyID(let kid):
      return "the keyring already holds a key with id \(kid)"
    case .cannotRetirePrimary(let kid):
      return "key \(kid) is the primary key and cannot be retired; rotate or promote another key first"
    case .invalidKDFParameters(let reason):
      return "passphrase KDF parameters out of range: \(reason)"
    case .resourceUnavailable(let what):
      return "system resource unavailable: \(what)"
    case .backendFailure(let function):
      return "cryptographic library call \(function) failed"
    }
  }
}
