import CSodium

/// Random bytes from the operating system's CSPRNG.
///
/// Backed by libsodium's `randombytes_buf`, which on Linux reads
/// `getrandom(2)` and blocks until the kernel pool is initialised. It never
/// falls back to a weaker source.
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
}
