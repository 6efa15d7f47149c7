// The file edge of batch processing: reading lines and writing all or
// nothing, through TaskSystem (descriptors, the FileSystem seam).
import CommandKit
import TaskCrypto
import TaskSystem

/// Reads a file descriptor line by line in bounded memory and linear time
/// (TaskSystem's `LineBuffer`: each byte is searched once, whether the
/// input comes from a file or 64 KiB at a time from a pipe).
struct LineReader {
  /// The largest line accepted: a sealed value at its size limit, plus
  /// room for the JSON around it.
  static let lineLimit = 24 << 20

  let descriptor: FileDescriptor
  private let buffer = LineBuffer(limit: lineLimit)

  init(_ descriptor: FileDescriptor) {
    self.descriptor = descriptor
  }

  /// Calls `body` with each line (without its newline), its number from
  /// 1, and the bytes read so far. A final line without a newline is a
  /// line; an empty input has none.
  ///
  /// - Throws: `CLIError.io` on a read error, `.malformedInput` for a line
  ///   over `lineLimit` (before more than one read past the limit is
  ///   held), or whatever `body` throws.
  func forEachLine(_ body: (UnsafeRawBufferPointer, Int, Int) throws -> Void) throws {
    var number = 0
    while true {
      switch try buffer.nextLine(from: descriptor) {
      case .end:
        return
      case .tooLong:
        throw CLIError.malformedInput(line: number + 1, reason: "longer than \(Self.lineLimit) bytes")
      case .line(let line):
        number += 1
        try body(line, number, buffer.bytesRead)
      }
    }
  }
}

/// Opens `path` for reading (standard input for `-`) and calls `body` with
/// its descriptor and, for a regular file, its size.
func withInput<Result>(_ path: String, _ body: (FileDescriptor, Int?) throws -> Result) throws -> Result {
  guard path != "-" else { return try body(.standardInput, nil) }
  let file = try OpenFile.reading(path)
  return try body(file.descriptor, file.size)
}

/// Where a batch's output goes, all or nothing.
///
/// To a file: a new temporary file (0600, `O_EXCL | O_NOFOLLOW`) in the
/// target's directory, written as the batch streams, then fsync'd, renamed
/// over the target and the directory fsync'd (TaskSystem's durable-write
/// policy, through its `FileSystem` seam), so the target holds either its
/// old contents or the whole new output, never part of it; on failure the
/// temporary file is removed. To standard output: the output is held in
/// memory and written only when the whole batch succeeded.
final class BatchOutput {
  private static let flushSize = 1 << 20
  private let fileSystem: any FileSystem = PosixFileSystem()
  private let target: String?
  private let temporary: String?
  private let fd: Int32
  private let streams: StandardStreams
  private var pending = [UInt8]()
  private var finished = false

  /// Output to `path`, or to standard output when nil.
  ///
  /// - Throws: `CLIError` when the temporary file cannot be made.
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
    let temporary = "\(directory).\(name).taskkey-\(SecureRandom.uint32()).tmp"
    let fileSystem = self.fileSystem
    fd = try fileSystem.createExclusive(temporary)
    self.temporary = temporary
  }

  deinit {
    guard let temporary, !finished else { return }
    try? fileSystem.close(fd, path: temporary)
    try? fileSystem.unlink(temporary)
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
      try pending.withUnsafeBytes { try fileSystem.write(fd, $0, path: temporary) }
    } else {
      try streams.write(pending)
    }
    pending.removeAll(keepingCapacity: true)
  }

  /// Makes the output visible: writes what is held, and for a file,
  /// fsyncs, renames over the target and fsyncs its directory.
  func commit() throws {
    try flush()
    guard let target, let temporary else { return }
    try fileSystem.fsync(fd, path: temporary)
    finished = true
    do {
      try fileSystem.close(fd, path: temporary)
      try fileSystem.move(temporary, to: target)
    } catch {
      try? fileSystem.unlink(temporary)
      throw error
    }
    try fileSystem.fsyncDirectory(target.lastIndex(of: "/").map { String(target[...$0]) } ?? ".")
  }
}
