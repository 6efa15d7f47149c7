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
  /// A chunked-encryption message (an attachment) ended inside its 56-byte
  /// header (salt and commitment): it was truncated or is not one.
  case truncatedHeader(byteCount: Int)
  /// The header's key commitment does not match the key and context: the
  /// wrong key, the wrong context (another record), or an altered salt or
  /// commitment. Checked before any chunk is decrypted.
  case commitmentMismatch
  /// The message ends on a chunk boundary, so its final (short, possibly
  /// empty) chunk is missing: it was truncated.
  case missingFinalChunk(chunkIndex: UInt64)
  /// The message ends with fewer bytes than one authentication tag (16)
  /// after its last whole chunk: it was truncated inside a tag.
  case truncatedChunk(chunkIndex: UInt64, byteCount: Int)
  /// A full chunk did not authenticate at its position: it was altered, or
  /// comes from another message (spliced).
  case chunkAuthenticationFailed(chunkIndex: UInt64)
  /// A chunk authenticates, but at another position of the same message:
  /// chunks were reordered, duplicated or removed.
  case chunkOutOfPlace(chunkIndex: UInt64, sealedAt: UInt64)
  /// The last, short chunk did not authenticate: the message was cut inside
  /// a chunk, or its last chunk was altered.
  case finalChunkAuthenticationFailed(chunkIndex: UInt64)
  /// The message's real final chunk is followed by more bytes (appended
  /// data or a further chunk).
  case trailingData(afterChunkIndex: UInt64)
  /// A requested byte range does not lie inside the message.
  case rangeOutOfBounds(offset: UInt64, length: UInt64, messageByteCount: UInt64)
  /// A CPace input is out of range: an empty PRS, or a PRS, channel
  /// identifier, session identifier or associated data over 4096 bytes;
  /// the reason names which (never its bytes).
  case cpaceInvalidInput(String)
  /// A received CPace message is not 32 bytes.
  case cpaceMessageLength(byteCount: Int)
  /// A received CPace message does not decode to a ristretto255 element
  /// (non-canonical, negative, or not a valid encoding; RFC 9496 §4.3.1).
  case cpaceInvalidPoint
  /// A received CPace message is the identity element, or the shared point
  /// K would be: the draft's abort on K = G.I.
  case cpaceIdentityPoint
  /// A received CPace message is this party's own message sent back (a
  /// reflection); an honest peer never sends it.
  case cpaceReflectedMessage
  /// The peer's key-confirmation tag does not verify: the two sides do not
  /// share the ISK (wrong PRS, CI or sid, or altered messages).
  case cpaceConfirmationFailed
  /// A CPace party was finished already; its scalar is gone and is never
  /// used twice. Start a new run.
  case cpaceFinished
}

extension TaskCryptoError {
  /// A stable snake_case name for the cause, used in `--json` output and in
  /// the test vectors' `error` fields (SECURITY.md lists them).
  public var code: String {
    switch self {
    case .authenticationFailed: return "authentication_failed"
    case .invalidKeySize: return "invalid_key_size"
    case .unsupportedVersion: return "unsupported_version"
    case .unknownKeyID: return "unknown_key_id"
    case .invalidBase64: return "invalid_base64"
    case .truncated: return "truncated"
    case .tooLarge: return "too_large"
    case .invalidUTF8: return "invalid_utf8"
    case .invalidKeyID: return "invalid_key_id"
    case .malformedKeyFile: return "malformed_key_file"
    case .duplicateKeyID: return "duplicate_key_id"
    case .cannotRetirePrimary: return "cannot_retire_primary"
    case .resourceUnavailable: return "resource_unavailable"
    case .backendFailure: return "backend_failure"
    case .invalidKDFParameters: return "invalid_kdf_parameters"
    case .truncatedHeader: return "truncated_header"
    case .commitmentMismatch: return "commitment_mismatch"
    case .missingFinalChunk: return "missing_final_chunk"
    case .truncatedChunk: return "truncated_chunk"
    case .chunkAuthenticationFailed: return "chunk_authentication_failed"
    case .chunkOutOfPlace: return "chunk_out_of_place"
    case .finalChunkAuthenticationFailed: return "final_chunk_authentication_failed"
    case .trailingData: return "trailing_data"
    case .rangeOutOfBounds: return "range_out_of_bounds"
    case .cpaceInvalidInput: return "cpace_invalid_input"
    case .cpaceMessageLength: return "cpace_message_length"
    case .cpaceInvalidPoint: return "cpace_invalid_point"
    case .cpaceIdentityPoint: return "cpace_identity_point"
    case .cpaceReflectedMessage: return "cpace_reflected_message"
    case .cpaceConfirmationFailed: return "cpace_confirmation_failed"
    case .cpaceFinished: return "cpace_finished"
    }
  }
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
    case .truncatedHeader(let count):
      return "truncated attachment: \(count) bytes end inside the 56-byte header; restore the file from a copy"
    case .commitmentMismatch:
      return "the attachment does not match this key and record: wrong key, wrong record, or an altered header"
    case .missingFinalChunk(let index):
      return "truncated attachment: the final chunk (\(index)) is missing; restore the file from a copy"
    case .truncatedChunk(let index, let count):
      return "truncated attachment: chunk \(index) has \(count) bytes, fewer than its 16-byte tag"
    case .chunkAuthenticationFailed(let index):
      return "chunk \(index) does not authenticate: the attachment was altered or spliced from another file"
    case .chunkOutOfPlace(let index, let sealedAt):
      return "chunk \(index) is chunk \(sealedAt) of this attachment: chunks were reordered, duplicated or removed"
    case .finalChunkAuthenticationFailed(let index):
      return "the final chunk (\(index)) does not authenticate: the attachment was cut inside a chunk or altered"
    case .trailingData(let index):
      return "the attachment has data after its final chunk (\(index)): bytes were appended"
    case .rangeOutOfBounds(let offset, let length, let count):
      return "range \(offset):\(length) is outside the attachment's \(count) bytes"
    case .cpaceInvalidInput(let reason):
      return "CPace input refused: \(reason); nothing was sent"
    case .cpaceMessageLength(let count):
      return "the peer's CPace message is \(count) bytes, not 32: the exchange is aborted; start it again"
    case .cpaceInvalidPoint:
      return "the peer's CPace message is not a valid ristretto255 element: the exchange is aborted; start it again"
    case .cpaceIdentityPoint:
      return "the peer's CPace message is the identity element: the exchange is aborted; start it again"
    case .cpaceReflectedMessage:
      return "the peer sent this device's own CPace message back: the exchange is aborted; start it again"
    case .cpaceConfirmationFailed:
      return "key confirmation failed: the other device used another code, or the messages were altered; start again"
    case .cpaceFinished:
      return "this CPace party has finished already; a new exchange needs a new party"
    }
  }
}
