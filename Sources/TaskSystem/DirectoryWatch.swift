import Glibc

/// Tells whether anything changed in a few directories since the watch was
/// made, for the price of one `read(2)` that finds nothing: an inotify
/// descriptor, non-blocking, watching each directory for an entry created,
/// removed, renamed into or out of it, written, closed after writing or
/// given new attributes, and for the directory itself being removed or
/// moved.
///
/// The kernel queues an event before the call that caused it returns, so a
/// change finished before `sawChange()` is called is seen by it. Any event,
/// a full queue or a failed read counts as a change, and once a change is
/// seen the watch says so for good: make a new one. A watch also counts as
/// changed once it is older than its `lifetime`, which bounds how long a
/// change it cannot see (another machine's, on a network file system) goes
/// unseen.
///
/// Not thread-safe: one caller at a time (the owner's lock).
public final class DirectoryWatch {
  private let descriptor: Int32
  private var changed = false
  private let expiry: UInt64

  /// The default lifetime: one second.
  public static let defaultLifetime: UInt64 = 1_000_000_000

  private static let events =
    IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_DELETE_SELF
    | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW

  /// Starts watching `directories`.
  ///
  /// - Parameters:
  ///   - directories: absolute paths of directories (a symlink is not
  ///     followed).
  ///   - lifetime: nanoseconds after which the watch counts as changed.
  /// - Throws: `SystemError.failed` with the call `inotify_init1`, or
  ///   `inotify_add_watch` and the directory (for example one that does
  ///   not exist, or the user's watch limit reached); nothing is left open.
  public init(directories: [String], lifetime: UInt64 = DirectoryWatch.defaultLifetime) throws {
    expiry = Self.monotonicNanoseconds() &+ lifetime
    let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard descriptor >= 0 else { throw SystemError.failed(call: "inotify_init1", path: "", errno: errno) }
    for directory in directories where inotify_add_watch(descriptor, directory, UInt32(Self.events)) < 0 {
      let failure = errno
      close(descriptor)
      throw SystemError.failed(call: "inotify_add_watch", path: directory, errno: failure)
    }
    self.descriptor = descriptor
  }

  deinit { close(descriptor) }

  /// A new watch of `directories`, kept only if `stillHolds` is true once
  /// the watch exists: a change made before the watch is seen by that
  /// check, and every later one by the watch, so nothing falls between.
  ///
  /// - Parameters:
  ///   - directories: as in `init(directories:lifetime:)`.
  ///   - stillHolds: the check of what the watch stands guard over (for
  ///     example, that a file is still the one read).
  /// - Returns: the watch, or nil when it cannot be made or the check fails.
  public static func confirming(_ directories: [String], _ stillHolds: () -> Bool) -> DirectoryWatch? {
    guard let watch = try? DirectoryWatch(directories: directories), stillHolds() else { return nil }
    return watch
  }

  /// Whether anything happened in the watched directories since the watch
  /// was made (or the kernel cannot say it did not).
  public func sawChange() -> Bool {
    guard !changed else { return true }
    guard Self.monotonicNanoseconds() < expiry else {
      changed = true
      return true
    }
    let count = withUnsafeTemporaryAllocation(byteCount: 512, alignment: 8) { buffer in
      read(descriptor, buffer.baseAddress, buffer.count)
    }
    if count < 0, errno == EAGAIN || errno == EWOULDBLOCK { return false }
    changed = true
    return true
  }

  private static func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
  }
}
