import CSodium
import TaskSystem

/// Locked memory shared by small secrets (keys, session keys, short
/// inputs): 16 KiB regions, each one `sodium_malloc` allocation (locked,
/// excluded from core dumps, between guard pages), handed out in 64-byte
/// slots. A command that holds a dozen keys then costs one locked mapping
/// instead of a dozen (each `sodium_malloc` / `sodium_free` pair is nine
/// system calls, about 30 µs: issue 14, goal 6).
///
/// Free slots are always zero: a secret's slots are wiped when it is
/// released, before anyone can be handed them again. Regions are kept for
/// the life of the process (`sodium_free` wipes memory only when a region
/// is released, and these never are); thread-safe.
enum SecretArena {
  /// The unit handed out, in bytes.
  static let slotSize = 64
  /// Slots per region: 16 KiB.
  static let slotsPerRegion = 256
  /// The largest request served from a region; larger secrets get their
  /// own `sodium_malloc` allocation.
  static let largestRequest = 2048

  private final class Region {
    let base: UnsafeMutableRawPointer
    /// One bit per slot, set when in use.
    var used = [UInt64](repeating: 0, count: SecretArena.slotsPerRegion / 64)

    init?() {
      let size = SecretArena.slotSize * SecretArena.slotsPerRegion
      guard let base = sodium_malloc(size) else { return nil }
      sodium_memzero(base, size)
      self.base = base
    }

    func isUsed(_ slot: Int) -> Bool { used[slot >> 6] & (1 << UInt64(slot & 63)) != 0 }

    func mark(_ slots: Range<Int>, used value: Bool) {
      for slot in slots {
        if value { used[slot >> 6] |= 1 << UInt64(slot & 63) } else { used[slot >> 6] &= ~(1 << UInt64(slot & 63)) }
      }
    }

    /// The first run of `count` free slots.
    func firstFree(_ count: Int) -> Int? {
      var start = 0
      while start + count <= SecretArena.slotsPerRegion {
        if let taken = (start..<start + count).last(where: isUsed) {
          start = taken + 1
        } else {
          return start
        }
      }
      return nil
    }

    func contains(_ pointer: UnsafeMutableRawPointer) -> Bool {
      pointer >= base && pointer < base + SecretArena.slotSize * SecretArena.slotsPerRegion
    }
  }

  nonisolated(unsafe) private static var regions = [Region]()
  private static let lock = ThreadLock()

  /// `byteCount` zeroed bytes in a region, or nil when `byteCount` is too
  /// large for one or no locked region can be made.
  static func allocate(_ byteCount: Int) -> UnsafeMutableRawPointer? {
    guard byteCount > 0, byteCount <= largestRequest else { return nil }
    let count = (byteCount + slotSize - 1) / slotSize
    return lock.withLock {
      for region in regions {
        if let start = region.firstFree(count) {
          region.mark(start..<start + count, used: true)
          return region.base + start * slotSize
        }
      }
      guard let region = Region() else { return nil }
      regions.append(region)
      region.mark(0..<count, used: true)
      return region.base
    }
  }

  /// Wipes and gives back what `allocate(byteCount)` returned.
  static func release(_ pointer: UnsafeMutableRawPointer, byteCount: Int) {
    let count = (byteCount + slotSize - 1) / slotSize
    sodium_memzero(pointer, count * slotSize)
    lock.withLock {
      guard let region = regions.first(where: { $0.contains(pointer) }) else {
        preconditionFailure("released memory that is not in a secret region")
      }
      let start = (pointer - region.base) / slotSize
      region.mark(start..<start + count, used: false)
    }
  }

  /// Whether `pointer` lies in a region (tests).
  static func holds(_ pointer: UnsafeRawPointer) -> Bool {
    lock.withLock { regions.contains { $0.contains(UnsafeMutableRawPointer(mutating: pointer)) } }
  }

  /// For the slots of a released secret at `pointer`: true when they are
  /// all zero, false when not, nil when someone was handed them since
  /// (tests).
  static func releasedSlotsAreZero(_ pointer: UnsafeRawPointer, byteCount: Int) -> Bool? {
    let count = (byteCount + slotSize - 1) / slotSize
    return lock.withLock {
      let start = UnsafeMutableRawPointer(mutating: pointer)
      guard let region = regions.first(where: { $0.contains(start) }) else { return false }
      let first = (start - region.base) / slotSize
      guard !(first..<first + count).contains(where: region.isUsed) else { return nil }
      return UnsafeRawBufferPointer(start: pointer, count: count * slotSize).allSatisfy { $0 == 0 }
    }
  }
}
