// The libc edge of batch processing (reading lines, writing all-or-nothing):
// the one file of the batch engine that imports Glibc, kept apart so it can
// move onto TaskSystem's durable-replace seam.
import Glibc
import TaskCrypto

/// Reads a file descriptor line by line in 1 MiB chunks, in constant memory.
struct LineReader {
  /// The largest line accepted: a sealed value at its size limit, plus
  /// room for the JSON around it.
  static let lineLimit = 24 << 20
  private static let chunk = 1 << 20

  let fd: Int32
  let path: String
  private var buffer = [UInt8]()
  private var start = 0
  private var ended = false
  /// Bytes read so far, for progress.
  private(set) var bytesRead = 0

  init(fd: Int32, path: String) {
    self.fd = fd
    self.path = path
    buffer.reserveCapacity(Self.chunk * 2)
  }

  /// Calls `body` with each line (without its newline), its number from
  /// 1, and the bytes read so far. A final line without a newline is a line; an empty input has
  /// none.
  ///
  /// - Throws: `CLIError.io` on a read error, `.malformedInput` for a line
  ///   over `lineLimit`, or whatever `body` throws.
  mutating func forEachLine(_ body: (UnsafeRawBufferPointer, Int, Int) throws -> Void) throws {
    var number = 0
    while true {
      let found = buffer.withUnsafeBytes { bytes -> Int? in
        guard start < bytes.count else { return nil }
        let from = bytes.baseAddress! + start
        guard let hit = memchr(from, 0x0a, bytes.count - start) else { return nil }
        return UnsafeRawPointer(hit) - UnsafeRawPointer(bytes.baseAddress!)
      }
      if let end = found {
        number += 1
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<end]), number, bytesRead) }
        start = end + 1
        continue
      }
      if ended {
        if start < buffer.count {
          number += 1
          try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start...]), number, bytesRead) }
        }
        return
      }
      guard buffer.count - start <= Self.lineLimit else {
        throw CLIError.malformedInput(line: number + 1, reason: "longer than \(Self.lineLimit) bytes")
      }
      buffer.removeSubrange(0..<start)
      start = 0
      try fill()
    }
  }

  private mutating func fill() throws {
    let old = buffer.count
    buffer.append(contentsOf: repeatElement(0, count: Self.chunk))
    while true {
      let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + old, Self.chunk) }
      if count < 0 && errno == EINTR { continue }
      guard count >= 0 else {
        let code = errno
        buffer.removeSubrange(old...)
        throw CLIError.io(path: path, call: "read", errno: code)
      }
      buffer.removeSubrange((old + count)...)
      bytesRead += count
      if count == 0 { ended = true }
      return
    }
  }
}

/// Opens `path` for reading (or standard input for `-`), calls `body` with
/// the descriptor and the file's size when it is a regular file, and closes
/// it.
func withInput<Result>(_ path: String, _ body: (Int32, Int?) throws -> Result) throws -> Result {
  let fd = path == "-" ? 0 : open(path, O_RDONLY | O_CLOEXEC)
  guard fd >= 0 else { throw CLIError.cannotOpen(path: path, reason: errnoDescription(errno)) }
  defer { if fd != 0 { close(fd) } }
  var status = stat()
  let size = fstat(fd, &status) == 0 && status.st_mode & S_IFMT == S_IFREG ? Int(status.st_size) : nil
  return try body(fd, size)
}

/// Where a batch's output goes, all or nothing.
///
/// To a file: a new temporary file (0600, `O_EXCL | O_NOFOLLOW`) in the
/// target's directory, written as the batch streams, then fsync'd, renamed
/// over the target and the directory fsync'd, so the target holds either
/// its old contents or the whole new output, never part of it; on failure
/// the temporary file is removed. To standard output: the output is held in
/// memory and written only when the whole batch succeeded.
final class BatchOutput {
  private static let flushSize = 1 << 20
  private let target: String?
  private let temporary: String?
  private let fd: Int32
  private let streams: StandardStreams
  private var pending = [UInt8]()
  private var committed = false

  /// Output to `path`, or to standard output when nil.
  ///
  /// - Throws: `CLIError.cannotOpen` when the temporary file cannot be made.
  init(path: String?, streams: StandardStreams) throws {
    target = path
    self.streams = streams
    pending.reserveCapacity(Self.flushSize + 4096)
    guard let path else {
      temporary = nil
      fd = -1
      return
    }
    let slash = path.lastIndex(of: "/")
    let directory = slash.map { String(path[...$0]) } ?? ""
    let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
    let temporary = "\(directory).\(name).taskkey-\(getpid())-\(SecureRandom.uint32()).tmp"
    let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
    guard fd >= 0 else { throw CLIError.cannotOpen(path: temporary, reason: errnoDescription(errno)) }
    self.temporary = temporary
    self.fd = fd
  }

  deinit {
    if let temporary, !committed {
      close(fd)
      unlink(temporary)
    }
  }

  /// Adds bytes; to a file they are written once 1 MiB has gathered.
  func append(_ bytes: UnsafeRawBufferPointer) throws {
    pending.append(contentsOf: bytes)
    if temporary != nil && pending.count >= Self.flushSize { try flush() }
  }

  func append(_ byte: UInt8) {
    pending.append(byte)
  }

  private func flush() throws {
    if let temporary {
      try writeAll(fd: fd, pending, path: temporary)
    } else {
      try streams.writeOutput(pending)
    }
    pending.removeAll(keepingCapacity: true)
  }

  /// Makes the output visible: writes what is held, and for a file,
  /// fsyncs, renames over the target and fsyncs its directory.
  func commit() throws {
    try flush()
    guard let target, let temporary else { return }
    guard fsync(fd) == 0 else { throw CLIError.io(path: temporary, call: "fsync", errno: errno) }
    guard close(fd) == 0 else { throw CLIError.io(path: temporary, call: "close", errno: errno) }
    guard rename(temporary, target) == 0 else {
      let code = errno
      unlink(temporary)
      committed = true
      throw CLIError.io(path: target, call: "rename", errno: code)
    }
    committed = true
    let slash = target.lastIndex(of: "/")
    let directory = slash.map { String(target[...$0]) } ?? "."
    let directoryFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard directoryFD >= 0 else { throw CLIError.io(path: directory, call: "open", errno: errno) }
    defer { close(directoryFD) }
    guard fsync(directoryFD) == 0 else { throw CLIError.io(path: directory, call: "fsync", errno: errno) }
  }
}

/// Whether standard error is a terminal (for progress bars).
func standardErrorIsTerminal() -> Bool { isatty(2) == 1 }

/// Writes text to standard error, ignoring failure (progress only).
func writeToStandardError(_ text: String) {
  var text = text
  text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}
