import CSodium
import TaskSystem

/// Random bytes from the operating system's CSPRNG.
///
/// Keys and other secrets come from libsodium's `randombytes_buf`, which on
/// Linux reads `getrandom(2)` and blocks until the kernel pool is
/// initialised; it never falls back to a weaker source. Nonces come from a
/// per-thread buffer that is refilled from `getrandom(2)` a page at a time,
/// wiped as it is used and never inherited by a forked child (see
/// `nonce(into:)`).
public enum SecureRandom {
  /// Fills `buffer` with random bytes.
  public static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
    ensureSodium()
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    randombytes_buf(base, buffer.count)
  }

  /// Returns `count` random bytes. For secrets use `SecureBytes.random(count:)`,
  /// which keeps them in locked memory.
  public static func bytes(count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    bytes.withUnsafeMutableBytes { fill($0) }
    return bytes
  }

  /// Returns a uniformly random 32-bit integer.
  public static func uint32() -> UInt32 {
    ensureSodium()
    return randombytes_random()
  }

  /// Fills `buffer` with random bytes for a nonce, from this thread's
  /// buffer of kernel randomness (TaskSystem's `NonceRandomness`): no
  /// system call for most nonces.
  ///
  /// Each byte comes from `getrandom(2)` and is handed out once (it is
  /// wiped from the buffer as it is taken). A forked child never reuses
  /// its parent's buffered bytes (the buffer page is `MADV_WIPEONFORK`
  /// and wiped by an atfork handler too). The buffer is excluded from core
  /// dumps and wiped when its thread exits.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when the kernel
  ///   refuses random bytes.
  static func nonce(into buffer: UnsafeMutableRawBufferPointer) throws {
    do {
      try NonceRandomness.fill(buffer)
    } catch {
      throw TaskCryptoError.resourceUnavailable("random bytes (getrandom)")
    }
  }

  /// A fresh 12-byte nonce as an array, from `nonce(into:)`.
  ///
  /// - Throws: as `nonce(into:)`.
  static func nonceBytes() throws -> [UInt8] {
    var nonce = [UInt8](repeating: 0, count: AES.GCM.nonceByteCount)
    try nonce.withUnsafeMutableBytes { try Self.nonce(into: $0) }
    return nonce
  }
}

extension SecureRandom {
  /// Test seam: forks a real child process, which draws `child.count`
  /// nonce bytes and sends them back, while this process draws
  /// `parent.count`. True when both sides succeeded.
  static func forkProbe(parent: UnsafeMutableRawBufferPointer, child: UnsafeMutableRawBufferPointer) -> Bool {
    NonceRandomness.forkProbe(parent: parent, child: child)
  }

  /// Test seam: unused bytes in this thread's nonce buffer.
  static var bufferedNonceByteCount: Int { NonceRandomness.bufferedByteCount }

  /// Test seam: whether every byte already handed out is zero in the buffer.
  static var consumedNonceBytesAreWiped: Bool { NonceRandomness.consumedBytesAreWiped }
}
