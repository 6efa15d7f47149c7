import TaskAttachments
import TaskSystem

/// A byte range of an attachment's content, written as HTTP writes ranges:
/// `START-END` with both offsets inclusive (`0-1023` is the first KiB), or
/// `START-` for everything from `START` to the end.
///
/// A range says nothing of the attachment it is used on: `bounds(byteCount:)`
/// decides whether it fits. Suffix ranges (`-500`, "the last 500 bytes")
/// and lists (`0-9,20-29`) are not offered.
public struct AttachmentRange: Sendable, Hashable, CustomStringConvertible {
  /// The offset of the first byte.
  public let start: UInt64
  /// The offset of the last byte (inclusive), or nil for "to the end".
  public let end: UInt64?

  /// A range from `start` through `end` (inclusive; nil: to the end).
  ///
  /// - Throws: `TaskerError.invalidValue` (field `range`) when `end` is
  ///   before `start`.
  public init(start: UInt64, through end: UInt64? = nil) throws {
    if let end, end < start {
      throw TaskerError.invalidValue(field: "range", reason: "'\(start)-\(end)' ends before it starts")
    }
    self.start = start
    self.end = end
  }

  /// Parses `START-END` or `START-`: decimal digits only (no sign, no
  /// space), each offset at most 2^64 - 1, `END` not before `START`.
  ///
  /// - Throws: `TaskerError.invalidValue` (field `range`) naming the text
  ///   and the rule it breaks: not the shape (`-5`, `5`, `+1-2`, `a-b`,
  ///   `1-2-3`), an offset too large, or `END` before `START` (`5-3`).
  public init(parsing text: String) throws {
    let parts = text.utf8.split(separator: UInt8(ascii: "-"), maxSplits: 2, omittingEmptySubsequences: false)
    let shape = TaskerError.invalidValue(
      field: "range", reason: "'\(text)' is not START-END or START- (inclusive byte offsets, for example 0-1023)")
    guard parts.count == 2, let start = try Self.offset(parts[0], text: text) else { throw shape }
    guard !parts[1].isEmpty else {
      try self.init(start: start)
      return
    }
    guard let end = try Self.offset(parts[1], text: text) else { throw shape }
    try self.init(start: start, through: end)
  }

  /// The offset `digits` spells, or nil when it is empty or holds anything
  /// but ASCII digits.
  ///
  /// - Throws: `TaskerError.invalidValue` when it is larger than 2^64 - 1.
  private static func offset(_ digits: Substring.UTF8View, text: String) throws -> UInt64? {
    guard !digits.isEmpty else { return nil }
    var value: UInt64 = 0
    for byte in digits {
      guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
      let (tens, overflowed) = value.multipliedReportingOverflow(by: 10)
      let (sum, carried) = tens.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
      guard !overflowed, !carried else {
        throw TaskerError.invalidValue(field: "range", reason: "'\(text)' has an offset past 2^64 - 1")
      }
      value = sum
    }
    return value
  }

  /// Where the range lies in content of `byteCount` bytes.
  ///
  /// - Returns: the offset and length to read, or nil when the range does
  ///   not fit: it starts at or after the end, or ends after the last
  ///   byte (an empty attachment fits no range). A range is never cut
  ///   short to fit.
  public func bounds(byteCount: UInt64) -> (offset: UInt64, length: UInt64)? {
    guard start < byteCount else { return nil }
    let last = end ?? byteCount - 1
    guard last < byteCount else { return nil }
    return (start, last - start + 1)
  }

  /// `START-END` or `START-`, as `init(parsing:)` reads it.
  public var description: String { "\(start)-" + (end.map(String.init) ?? "") }
}

extension TaskStore {
  /// Streams bytes `range` of an attachment's content to `write`, one
  /// piece of at most 1 MiB at a time, reading and (when sealed)
  /// decrypting only the chunks the range touches.
  ///
  /// Before any byte is read the row is checked as `readAttachment(id:to:)`
  /// checks it (its file is the name the code derives; sealed exactly when
  /// the row says so), and the content's length must be the recorded one:
  /// for a sealed file TaskAttachments' random-access reader authenticates
  /// the wrapper, the commitment and the final chunk first, so the length
  /// the range is checked against is authenticated; then every chunk is
  /// verified before any of its bytes reach `write`.
  ///
  /// - Parameters:
  ///   - id: the attachment.
  ///   - range: the bytes wanted; it must lie inside the content.
  ///   - write: receives the bytes in order.
  /// - Returns: the number of bytes written.
  /// - Throws: `TaskerError.notFound`; `.attachmentRefused`;
  ///   `.rangeNotSatisfiable` (nothing written); `.fileAccess` (a length
  ///   that differs from the record); `.system` (a missing or unreadable
  ///   file); the key source's errors and `.attachment` for a sealed file;
  ///   what `write` throws.
  @discardableResult
  public func readAttachment(id: Int64, range: AttachmentRange, to write: ([UInt8]) throws -> Void) throws -> UInt64 {
    let row = try localAttachmentRow(id: id)
    let file = try row.location()
    let path = attachmentsDirectory + "/" + file.name
    let read: (UInt64, UnsafeMutableRawBufferPointer) throws -> Void
    let byteCount: UInt64
    if row.record.sealed {
      let keyring = try sealer.keyring()
      let reader = try Self.attachmentCall(file.record) {
        try AttachmentReader(path: path, keyring: keyring, record: file.record)
      }
      try row.check(fileIsSealed: reader.isSealed)
      byteCount = reader.byteCount
      read = { offset, buffer in try Self.attachmentCall(file.record) { try reader.read(offset: offset, into: buffer) }
      }
    } else {
      let opened = try TaskerFiles.system { try OpenFile.reading(path) }
      guard let status = try TaskerFiles.system({ try FileStatus.of(path) }), status.kind == .regular,
        status.identity == opened.identity
      else { throw TaskerError.fileAccess(path: path, reason: "it is not a regular file") }
      byteCount = UInt64(opened.size)
      let head = min(byteCount, UInt64(Attachment.magic.count))
      var prefix = [UInt8](repeating: 0, count: Int(head))
      try TaskerFiles.system { try prefix.withUnsafeMutableBytes { try opened.descriptor.read(into: $0, atOffset: 0) } }
      try row.check(fileIsSealed: Attachment.isSealed(prefix: prefix))
      read = { offset, buffer in try TaskerFiles.system { try opened.descriptor.read(into: buffer, atOffset: offset) } }
    }
    guard byteCount == UInt64(row.record.byteCount) else {
      throw TaskerError.fileAccess(
        path: path,
        reason: "the file holds \(byteCount > UInt64(row.record.byteCount) ? "more" : "fewer") bytes than recorded")
    }
    guard let (offset, length) = range.bounds(byteCount: byteCount) else {
      throw TaskerError.rangeNotSatisfiable(record: "attachment/\(id)", range: range, byteCount: byteCount)
    }
    var buffer = [UInt8](repeating: 0, count: Int(min(length, UInt64(TaskerFiles.chunkByteCount))))
    defer { for index in buffer.indices { buffer[index] = 0 } }
    var done: UInt64 = 0
    while done < length {
      let count = Int(min(length - done, UInt64(buffer.count)))
      try buffer.withUnsafeMutableBytes {
        try read(offset + done, UnsafeMutableRawBufferPointer(rebasing: $0[..<count]))
      }
      try write(Array(buffer[..<count]))
      done += UInt64(count)
    }
    return length
  }

  /// Writes bytes `range` of attachment `id`'s content to a new file at
  /// `path`, as `writeAttachment(id:toNewFile:)` writes the whole: mode
  /// 0600, never through a symbolic link, never replacing a file, and the
  /// name appears only once every byte was read and verified.
  ///
  /// - Returns: the number of bytes written.
  /// - Throws: `TaskerError.outputExists` when `path` exists; as
  ///   `readAttachment(id:range:to:)` (then nothing is left under `path`);
  ///   `.system` for the new file.
  @discardableResult
  public func writeAttachment(id: Int64, range: AttachmentRange, toNewFile path: String) throws -> UInt64 {
    let exists = TaskerError.outputExists(path: path)
    guard !FileStatus.exists(path) else { throw exists }
    var length: UInt64 = 0
    do {
      try files.create(path, replacing: false) { write in
        length = try readAttachment(id: id, range: range, to: write)
      }
    } catch TaskerError.system(let error) where error.isAlreadyExisting {
      throw exists
    }
    return length
  }
}
