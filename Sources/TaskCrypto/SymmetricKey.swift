/// A 256-bit symmetric key for AES-256-GCM, held in locked, wiped memory.
///
/// The key bytes are reachable only through `withUnsafeBytes`. Two keys
/// compare equal in constant time. `description` never shows the bytes.
public struct SymmetricKey: Sendable, Equatable, CustomStringConvertible {
  /// The only key size TaskKey seals with: 32 bytes.
  public static let byteCount = 32

  let storage: SecureBytes
  /// Cipher contexts with this key's schedule set, reused across calls.
  let contexts = CipherContexts()

  /// Makes a fresh random key from the operating system's CSPRNG.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory
  ///   cannot be allocated.
  public static func generate() throws -> SymmetricKey {
    SymmetricKey(checked: try SecureBytes.random(count: byteCount))
  }

  /// Wraps existing key bytes, which must be exactly 32 bytes.
  ///
  /// - Throws: `TaskCryptoError.invalidKeySize` for any other length.
  public init(bytes: SecureBytes) throws {
    guard bytes.count == Self.byteCount else { throw TaskCryptoError.invalidKeySize(bytes.count) }
    self.storage = bytes
  }

  /// Copies 32 key bytes into locked memory; the caller wipes its copy.
  ///
  /// - Throws: `TaskCryptoError.invalidKeySize` for any other length, or
  ///   `TaskCryptoError.resourceUnavailable`.
  public init(copying bytes: UnsafeRawBufferPointer) throws {
    guard bytes.count == Self.byteCount else { throw TaskCryptoError.invalidKeySize(bytes.count) }
    self.storage = try SecureBytes(copying: bytes)
  }

  init(checked storage: SecureBytes) {
    precondition(storage.count == Self.byteCount)
    self.storage = storage
  }

  /// Calls `body` with the 32 key bytes. Do not let them escape.
  public func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    try storage.withUnsafeBytes(body)
  }

  /// Compares the key bytes in constant time.
  public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool {
    lhs.storage == rhs.storage
  }

  /// Frees the cipher contexts cached for this key, wiping their key
  /// schedules; called when the key is retired. Later use still works,
  /// without caching.
  func discardCachedContexts() {
    contexts.discard()
  }

  /// Always `SymmetricKey(256 bits, redacted)`.
  public var description: String { "SymmetricKey(256 bits, redacted)" }
}
