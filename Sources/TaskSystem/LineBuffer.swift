import Glibc

/// A growable byte buffer for reading a descriptor line by line in time
/// linear in the input, whatever size its reads come in.
///
/// Each byte is searched for the line end once: the buffer remembers how
/// far it has searched the unfinished line, so a pipe that delivers a long
/// line 64 KiB at a time is not rescanned after every read (which made a
/// 24 MiB line from a pipe cost quadratic time). The unfinished line is
/// moved to the front at most once per line, and the storage grows by
/// doubling up to `limit` plus one read. The search is libc's `memchr`.
///
/// The storage is zeroed (`explicit_bzero`) before it is freed or
/// replaced, as lines may be plaintext notes.
public final class LineBuffer {
  /// The longest line accepted, without its newline.
  public let limit: Int
  private let readSize: Int
  private var storage: UnsafeMutableRawPointer
  private var capacity: Int
  private var count = 0
  private var start = 0
  private var searched = 0
  private var ended = false
  /// The last `tooLong` left its line unfinished in the storage.
  private var overlong = false

  /// The bytes read from the descriptor so far.
  public private(set) var bytesRead = 0
  /// The bytes handed to `memchr` so far: at most `bytesRead`, the linear
  /// bound the tests check.
  private(set) var searchedByteCount = 0
  /// The storage's size now: at most `limit + 1 + readSize`.
  var storageByteCount: Int { capacity }

  /// What `nextLine` found.
  public enum Line {
    /// A line, without its newline: valid until the next call.
    case line(UnsafeRawBufferPointer)
    /// A line longer than `limit`; nothing more is read unless
    /// `skipLine` drops it.
    case tooLong
    /// The end of the input.
    case end
  }

  /// A buffer for lines of at most `limit` bytes, read `readSize` bytes
  /// (at most) at a time.
  public init(limit: Int, readSize: Int = 1 << 20) {
    precondition(limit > 0 && readSize > 0)
    self.limit = limit
    self.readSize = readSize
    capacity = Swift.min(readSize * 2, limit + readSize)
    storage = .allocate(byteCount: capacity, alignment: 16)
  }

  deinit {
    explicit_bzero(storage, capacity)
    storage.deallocate()
  }

  /// The next line of `descriptor`. A final line without a newline is a
  /// line; an empty input has none.
  ///
  /// - Throws: `SystemError.failed` with the call `read`.
  public func nextLine(from descriptor: FileDescriptor) throws -> Line {
    while true {
      if let found = memchr(storage + searched, 0x0a, count - searched) {
        let end = storage.distance(to: found)
        searchedByteCount += end + 1 - searched
        let lineStart = start
        start = end + 1
        searched = start
        guard end - lineStart <= limit else { return .tooLong }
        return .line(UnsafeRawBufferPointer(start: storage + lineStart, count: end - lineStart))
      }
      searchedByteCount += count - searched
      searched = count
      if count - start > limit {
        overlong = true
        return .tooLong
      }
      if ended {
        guard start < count else { return .end }
        let lineStart = start
        start = count
        return .line(UnsafeRawBufferPointer(start: storage + lineStart, count: count - lineStart))
      }
      try fill(from: descriptor)
    }
  }

  /// After a `tooLong`, reads on to the end of that line and throws its
  /// bytes away (zeroed, never kept beyond one read), so that the next
  /// `nextLine` returns the line after it. The storage does not grow.
  ///
  /// - Throws: `SystemError.failed` with the call `read`.
  public func skipLine(from descriptor: FileDescriptor) throws {
    guard overlong else { return }
    overlong = false
    while true {
      if let found = memchr(storage + searched, 0x0a, count - searched) {
        let end = storage.distance(to: found)
        searchedByteCount += end + 1 - searched
        explicit_bzero(storage + start, end + 1 - start)
        start = end + 1
        searched = start
        return
      }
      searchedByteCount += count - searched
      explicit_bzero(storage + start, count - start)
      start = 0
      count = 0
      searched = 0
      if ended { return }
      try fill(from: descriptor)
    }
  }

  /// Reads once into the free space, first moving the unfinished line to
  /// the front or growing the storage when less than one read's worth is
  /// free.
  private func fill(from descriptor: FileDescriptor) throws {
    if capacity - count < readSize {
      let pending = count - start
      if start > 0 && capacity - pending >= readSize {
        storage.copyMemory(from: storage + start, byteCount: pending)
      } else {
        let grown = Swift.max(pending + readSize, Swift.min(capacity * 2, limit + 1 + readSize))
        let larger = UnsafeMutableRawPointer.allocate(byteCount: grown, alignment: 16)
        larger.copyMemory(from: storage + start, byteCount: pending)
        explicit_bzero(storage, capacity)
        storage.deallocate()
        storage = larger
        capacity = grown
      }
      searched -= start
      count = pending
      start = 0
    }
    let room = UnsafeMutableRawBufferPointer(start: storage + count, count: Swift.min(readSize, capacity - count))
    let read = try descriptor.readSome(into: room)
    if read == 0 { ended = true }
    count += read
    bytesRead += read
  }
}
