/// The one implementation of TaskKey's durable writes, over the
/// `FileSystem` seam.
///
/// Policy, the same for every file TaskKey writes:
/// - a new file is created with `O_CREAT | O_EXCL | O_NOFOLLOW` and mode
///   0600, never written first and restricted later;
/// - a replacement goes to a temporary file in the same directory, which
///   is written, fsynced and closed, then renamed over the old name;
/// - the directory is fsynced after the rename. When that fsync fails the
///   call throws, although the new contents are already in place: the
///   caller must report that the change may not survive a crash (retrying
///   is safe);
/// - on any failure before the rename the old file is untouched and the
///   temporary file is removed.
extension FileSystem {
  /// Creates the new file `path` holding `contents`, synced with its
  /// directory. An existing name is never replaced or followed.
  ///
  /// - Throws: `SystemError.failed` (`isAlreadyExisting` when `path`
  ///   exists). A failure before the directory sync leaves no file behind.
  public func createNew(_ path: String, contents: UnsafeRawBufferPointer) throws {
    let fd = try createExclusive(path)
    var open = true
    do {
      try write(fd, contents, path: path)
      try fsync(fd, path: path)
      open = false
      try close(fd, path: path)
    } catch {
      if open { try? close(fd, path: path) }
      try? unlink(path)
      throw error
    }
    try fsyncDirectory(Self.directory(of: path))
  }

  /// Replaces `path` with `contents` atomically and durably: after a crash
  /// at any point, `path` holds either the old or the new contents.
  ///
  /// - Parameters:
  ///   - path: the file to replace or create.
  ///   - contents: the new bytes.
  ///   - temporary: the temporary name (same directory); default
  ///     `<path>.tmp`. A stale one from an interrupted write is removed.
  ///   - previous: when given and `path` exists, the old file is kept under
  ///     this name until the new one is confirmed, and put back if the
  ///     confirmation after the rename fails.
  ///   - confirm: reads back and checks a file (first the temporary file,
  ///     then `path` after the rename); throwing rejects the write.
  ///   - beforeRename: runs once the new contents are staged (the
  ///     temporary file written, synced and confirmed) and before anything
  ///     else changes, so a full disk or a lack of inodes fails before it
  ///     runs; throwing removes the temporary file and leaves `path` as it
  ///     was.
  /// - Throws: `SystemError.failed` naming the failed step, or what
  ///   `confirm` or `beforeRename` throws.
  public func replace(
    _ path: String, contents: UnsafeRawBufferPointer, temporary: String? = nil, previous: String? = nil,
    confirm: (String) throws -> Void = { _ in }, beforeRename: () throws -> Void = {}
  ) throws {
    let temporary = temporary ?? path + ".tmp"
    let directory = Self.directory(of: path)
    try unlink(temporary)
    let fd = try createExclusive(temporary)
    do {
      try write(fd, contents, path: temporary)
      try fsync(fd, path: temporary)
    } catch {
      try? close(fd, path: temporary)
      try? unlink(temporary)
      throw error
    }
    do {
      try close(fd, path: temporary)
      try confirm(temporary)
      try beforeRename()
    } catch {
      try? unlink(temporary)
      throw error
    }
    let keptPrevious = previous != nil && FileStatus.exists(path)
    do {
      if keptPrevious, let previous {
        try unlink(previous)
        try link(path, to: previous)
      }
      try move(temporary, to: path)
    } catch {
      try? unlink(temporary)
      if keptPrevious, let previous { try? unlink(previous) }
      throw error
    }
    try fsyncDirectory(directory)
    do {
      try confirm(path)
    } catch {
      if keptPrevious, let previous { try? move(previous, to: path) }
      throw error
    }
    if keptPrevious, let previous {
      try unlink(previous)
      try fsyncDirectory(directory)
    }
  }

  /// Replaces `path` with `contents`; see `replace(_:contents:temporary:previous:confirm:beforeRename:)`.
  public func replace(_ path: String, contents: [UInt8], temporary: String? = nil) throws {
    try contents.withUnsafeBytes { try replace(path, contents: $0, temporary: temporary) }
  }

  /// Creates the new file `path`; see `createNew(_:contents:)`.
  public func createNew(_ path: String, contents: [UInt8]) throws {
    try contents.withUnsafeBytes { try createNew(path, contents: $0) }
  }

  /// The directory that holds `path`, as dirname(1) says: "." for a name
  /// without a slash, "/" for a file in the root; trailing slashes ignored.
  public static func directory(of path: String) -> String {
    var bytes = Array(path.utf8)
    while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
    guard let slash = bytes.lastIndex(of: UInt8(ascii: "/")) else { return "." }
    var end = slash
    while end > 0 && bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
    return end == 0 ? "/" : String(decoding: bytes[..<end], as: UTF8.self)
  }
}
