/// A blob sealed on a second thread while the calling thread sends what
/// was sealed before: the storage pulls the bytes (a streamed `PUT`, a
/// folder target's temporary file), so an upload needs no staging copy
/// on the disk, and the machine's second core seals while the first
/// sends.
///
/// The seal pushes into a `SyncBlobPipe` (at most a few MiB between the
/// two, whatever the blob's size). `read` hands the bytes on in order but
/// never the last piece before the seal has ended whole with exactly
/// `byteCount` bytes: a seal that fails at its very end (a content longer
/// than its record says is found only there) leaves the upload short, and
/// the storage, which keeps an upload only when it is whole, never holds
/// a complete blob of it.
final class SyncBlobSource {
  /// The blob's length: what the upload announces.
  let byteCount: UInt64
  /// The attachment whose blob this is, for the error of a wrong length.
  private let attachment: Int64
  private let pipe: SyncBlobPipe
  /// The piece being handed on, and how much of it went.
  private var current: [UInt8] = []
  private var offset = 0
  /// The piece after `current`, taken before `current` is handed on.
  private var following: [UInt8]?
  /// Whether the seal ended whole.
  private var sealed = false
  /// The bytes taken from the pipe so far.
  private var taken: UInt64 = 0
  /// The first error `read` threw, for the caller to report as it is
  /// (a transport gives it only as its own reason to stop).
  private(set) var failure: (any Error)?

  /// Told how many bytes each `read` gave (a progress meter).
  private let given: ((Int) -> Void)?

  /// Starts `seal` on a worker thread; it pushes the blob's bytes in order.
  /// The caller's thread uses nothing `seal` touches until `finish`.
  init(
    byteCount: UInt64, attachment: Int64, given: ((Int) -> Void)? = nil,
    seal: @escaping (_ push: SyncBlobPipe.Push) throws -> Void
  ) {
    (self.byteCount, self.attachment, self.given) = (byteCount, attachment, given)
    let work = SyncHandedToWorker(seal)
    pipe = SyncBlobPipe(capacity: 2) { push in
      try work.value(push)
      return true
    }
  }

  /// Fills `buffer` with the blob's next bytes.
  ///
  /// - Returns: the count, 0 only once the whole blob was given.
  /// - Throws: the seal's error, or `SyncError.attachmentUnsendable` when
  ///   it gave other than `byteCount` bytes; the same error again after.
  func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    if let failure { throw failure }
    do {
      let count = try fill(buffer)
      given?(count)
      return count
    } catch {
      failure = error
      throw error
    }
  }

  /// Stops the seal if it is still running and waits for its thread.
  func finish() {
    pipe.cancel()
    pipe.finish()
  }

  private func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard !buffer.isEmpty else { return 0 }
    if offset == current.count {
      let used = current
      (current, offset) = ([], 0)
      if !used.isEmpty { pipe.recycle(used) }
      guard let next = try following ?? take() else { return 0 }
      (current, offset, following) = (next, 0, nil)
    }
    // A piece goes on only once another follows it or the seal ended whole.
    if following == nil, !sealed { following = try take() }
    let count = min(buffer.count, current.count - offset)
    current.withUnsafeBytes {
      buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
    }
    offset += count
    return count
  }

  /// The pipe's next piece, nil once the seal ended whole at `byteCount`.
  private func take() throws -> [UInt8]? {
    guard let piece = try pipe.next() else {
      sealed = true
      guard taken == byteCount else { throw wrongLength }
      return nil
    }
    taken += UInt64(piece.count)
    guard taken <= byteCount else { throw wrongLength }
    return piece
  }

  private var wrongLength: SyncError {
    .attachmentUnsendable(attachment: attachment, reason: "its sealed blob is not the length its record gives")
  }
}
