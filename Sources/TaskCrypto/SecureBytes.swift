import CSodium

/// A fixed-size buffer for secret bytes: allocated in locked memory, guarded,
/// wiped when released, compared in constant time, never printed.
///
/// The storage comes from `sodium_malloc`: it is `mlock`ed so it is not
/// swapped out, surrounded by guard pages, and excluded from core dumps
/// (`MADV_DONTDUMP`). Up to 2 KiB shares a 16 KiB `sodium_malloc` region
/// with other small secrets (`SecretArena`); larger buffers get their own.
/// `deinit` wipes the bytes (`sodium_memzero` of the slots, or `sodium_free`
/// of the own allocation). The bytes are reachable only inside
/// `withUnsafeBytes`.
public final class SecureBytes: @unchecked Sendable {
  private let base: UnsafeMutableRawPointer
  /// Whether the bytes are slots of a `SecretArena` region.
  private let isShared: Bool
  /// The number of secret bytes held.
  public let count: Int

  /// Allocates `count` zeroed bytes in locked memory.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when the system cannot
  ///   provide the locked allocation.
  public init(zeroedCount count: Int) throws {
    precondition(count >= 0, "negative size")
    ensureSodium()
    // sodium_malloc(0) is valid but returns a pointer we must not touch;
    // one byte keeps the arithmetic simple.
    let size = Swift.max(count, 1)
    if let slots = SecretArena.allocate(size) {
      self.base = slots
      self.isShared = true
    } else {
      guard let pointer = sodium_malloc(size) else {
        throw TaskCryptoError.resourceUnavailable("locked memory (sodium_malloc of \(count) bytes)")
      }
      self.base = pointer
      self.isShared = false
    }
    sodium_memzero(base, size)
    self.count = count
  }

  /// Copies `bytes` into a new locked buffer. The caller remains
  /// responsible for wiping its own copy.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` as `init(zeroedCount:)`.
  public convenience init(copying bytes: UnsafeRawBufferPointer) throws {
    try self.init(zeroedCount: bytes.count)
    if let source = bytes.baseAddress, bytes.count > 0 {
      base.copyMemory(from: source, byteCount: bytes.count)
    }
  }

  /// Makes `count` bytes from the operating system's CSPRNG
  /// (`randombytes_buf`, backed by `getrandom(2)`).
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` as `init(zeroedCount:)`.
  public static func random(count: Int) throws -> SecureBytes {
    let bytes = try SecureBytes(zeroedCount: count)
    bytes.withUnsafeMutableBytes { SecureRandom.fill($0) }
    return bytes
  }

  deinit {
    if isShared {
      // Zeroes the slots before they can be handed out again.
      SecretArena.release(base, byteCount: Swift.max(count, 1))
    } else {
      // sodium_free zeroes the whole region before unlocking and unmapping it.
      sodium_free(base)
    }
  }

  /// Calls `body` with read access to the secret bytes. Do not let the
  /// pointer escape, and do not copy the bytes into a `String` or `Array`.
  public func withUnsafeBytes<Result>(
    _ body: (UnsafeRawBufferPointer) throws -> Result
  ) rethrows -> Result {
    try body(UnsafeRawBufferPointer(start: base, count: count))
  }

  /// Calls `body` with write access to the secret bytes.
  public func withUnsafeMutableBytes<Result>(
    _ body: (UnsafeMutableRawBufferPointer) throws -> Result
  ) rethrows -> Result {
    try body(UnsafeMutableRawBufferPointer(start: base, count: count))
  }
}

extension SecureBytes: Equatable {
  /// Compares two buffers in time that depends only on their lengths.
  public static func == (lhs: SecureBytes, rhs: SecureBytes) -> Bool {
    lhs.withUnsafeBytes { left in
      rhs.withUnsafeBytes { right in ConstantTime.equals(left, right) }
    }
  }
}

extension SecureBytes: CustomStringConvertible, CustomDebugStringConvertible {
  /// Always `SecureBytes(<count> bytes, redacted)`: the bytes are never shown.
  public var description: String { "SecureBytes(\(count) bytes, redacted)" }
  /// The same redacted text as `description`.
  public var debugDescription: String { description }
}
