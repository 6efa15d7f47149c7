/// What a running sync tells whoever watches it (a terminal): a step
/// begun, or how far a long transfer has come. Never a secret, a title or
/// a path at the storage: counts, positions, device names, sizes.
public enum SyncProgress: Equatable, Sendable {
  /// A step begun, such as `sending object 3 of 24`: a line of its own.
  case step(String)
  /// A transfer named `label` (`sending attachment 1 of 2`,
  /// `fetching attachment 12`) at `bytes` of `total`: one line drawn again
  /// as it grows, ended once `bytes == total` (or by the next step).
  case transfer(_ label: String, bytes: UInt64, total: UInt64)

  /// The whole percent `bytes` is of `total` (100 for an empty transfer).
  public static func percent(_ bytes: UInt64, of total: UInt64) -> UInt64 {
    total == 0 ? 100 : bytes * 100 / total
  }
}

/// Counts a blob's bytes as they go and tells `progress` each time the
/// whole percent changes (at most 101 times, whatever the size).
final class SyncTransferMeter {
  private let label: String
  private let total: UInt64
  private let progress: (SyncProgress) -> Void
  private var bytes: UInt64 = 0
  private var told: UInt64?

  init(_ label: String, total: UInt64, progress: @escaping (SyncProgress) -> Void) {
    (self.label, self.total, self.progress) = (label, total, progress)
    tell()
  }

  /// Adds `count` bytes that went.
  func advance(by count: Int) {
    bytes = min(total, bytes + UInt64(count))
    tell()
  }

  private func tell() {
    let percent = SyncProgress.percent(bytes, of: total)
    guard percent != told else { return }
    told = percent
    progress(.transfer(label, bytes: bytes, total: total))
  }
}
