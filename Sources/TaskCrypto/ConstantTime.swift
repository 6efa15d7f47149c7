import CSodium
import FoundationEssentials

/// Comparisons whose running time does not depend on secret contents.
public enum ConstantTime {
  /// Returns whether `lhs` and `rhs` hold the same bytes, in time that
  /// depends only on their lengths (`sodium_memcmp`). Lengths are treated as
  /// public: buffers of different lengths compare unequal at once.
  public static func equals(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard lhs.count > 0, let left = lhs.baseAddress, let right = rhs.baseAddress else { return true }
    ensureSodium()
    return sodium_memcmp(left, right, lhs.count) == 0
  }

  /// Returns whether two byte collections are equal, as
  /// `equals(_:_:)` on raw buffers.
  public static func equals<A: ContiguousBytes, B: ContiguousBytes>(_ lhs: A, _ rhs: B) -> Bool {
    lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in equals(left, right) } }
  }
}
