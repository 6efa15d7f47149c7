import Glibc

/// A mutual-exclusion lock for threads of one process (a `pthread_mutex`),
/// used where Foundation's `NSLock` was: linking `NSLock` pulls in
/// Foundation's object runtime and costs every `taskkey` process start-up
/// time (issue 14, goal 6).
public final class ThreadLock: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  /// A new, unlocked lock.
  public init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Waits for and takes the lock.
  public func lock() { pthread_mutex_lock(mutex) }

  /// Takes the lock if no thread holds it, without waiting.
  ///
  /// - Returns: true when the lock was taken (release it with `unlock()`).
  public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

  /// Releases the lock taken by `lock()` or `tryLock()`.
  public func unlock() { pthread_mutex_unlock(mutex) }

  /// Runs `body` holding the lock.
  public func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
    lock()
    defer { unlock() }
    return try body()
  }
}
