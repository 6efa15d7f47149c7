import CTaskSystem
import Glibc

/// Random bytes for nonces from a per-thread buffer that is refilled from
/// `getrandom(2)` a page at a time (CTaskSystem's nonce_random.c).
///
/// Guarantees: every byte comes from the kernel and is handed out once (it
/// is wiped from the buffer as it is taken); a forked child never reuses its
/// parent's buffered bytes (the page is `MADV_WIPEONFORK`, and an atfork
/// handler wipes it too); the page is excluded from core dumps, locked when
/// the system allows, and wiped and unmapped when its thread exits.
/// Requests above 256 bytes go straight to `getrandom(2)`.
public enum NonceRandomness {
  /// Fills `buffer` with random bytes.
  ///
  /// - Throws: `SystemError.failed` (call `getrandom`) when the kernel
  ///   refuses random bytes.
  @inline(__always)
  public static func fill(_ buffer: UnsafeMutableRawBufferPointer) throws {
    guard let base = buffer.baseAddress, buffer.count > 0 else { return }
    guard task_system_random_nonce_bytes(base.assumingMemoryBound(to: UInt8.self), buffer.count) == 0 else {
      throw SystemError.failed(call: "getrandom", path: "<kernel randomness>", errno: errno)
    }
  }

  /// Test seam, `package` so that no app can call it: forks a real child
  /// process, which draws `child.count` bytes and sends them back, while
  /// this process draws `parent.count`. True when both sides succeeded.
  package static func forkProbe(parent: UnsafeMutableRawBufferPointer, child: UnsafeMutableRawBufferPointer) -> Bool {
    precondition(parent.count == child.count)
    return task_system_random_fork_probe(
      parent.baseAddress!.assumingMemoryBound(to: UInt8.self), child.baseAddress!.assumingMemoryBound(to: UInt8.self),
      parent.count) == 0
  }

  /// Test seam (`package`): unused bytes in this thread's buffer.
  package static var bufferedByteCount: Int { task_system_random_buffered() }

  /// Test seam (`package`): whether every byte already handed out is zero
  /// in the buffer.
  package static var consumedBytesAreWiped: Bool { task_system_random_consumed_bytes_are_wiped() == 1 }
}
