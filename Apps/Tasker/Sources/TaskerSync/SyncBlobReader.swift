import TaskAttachments
import TaskCrypto

/// A blob read as it streams in (docs/formats/sync-storage.md, *The
/// blob*): the sealed bytes pulled in pieces from `next`, the content
/// handed out as each chunk verifies, and the end told only once every
/// reading rule held for the whole blob.
///
/// The rules are applied in their order even though the bytes arrive in
/// order: a blob that breaks rule 2, 3, 4 or 5 is still read to its end
/// (at most `L + 1` bytes) so that its length (rule 1) is judged first,
/// and bad padding (rule 5) is told only when every chunk verified
/// (rule 4). Content handed out before a refusal was verified but is not
/// the whole: the caller keeps nothing until the end is told.
final class SyncBlobReader {
  private let next: () throws -> [UInt8]?
  /// Takes back each piece of input once read (`SyncBlobPipe.recycle`).
  private let recycle: ([UInt8]) -> Void
  private let opener: Attachment.StreamOpener
  /// The blob's exact length L.
  private let expected: UInt64
  /// The content's length, then the padded plaintext's.
  private let size: UInt64
  private let padded: UInt64
  private var received: UInt64 = 0
  /// Plaintext bytes seen so far, content and padding.
  private var opened: UInt64 = 0
  /// The first refusal by rules 2 to 4, told once the length is judged.
  private var refusal: SyncOutcome?
  private var paddingIsBad = false
  private var ended = false
  private var output: [UInt8] = []

  /// A reader of the blob of record `uid` whose sealed bytes `next` gives
  /// in order (nil at their end); `recycle` takes back each piece read.
  ///
  /// - Throws: `SyncOutcome.tooLarge` for a size past what the attachment
  ///   format can seal; `TaskCryptoError` when locked memory is refused.
  init(
    _ next: @escaping () throws -> [UInt8]?, recycle: @escaping ([UInt8]) -> Void = { _ in },
    content: SyncAttachmentContent, uid: String, keyring: SyncKeyring, targetID: [UInt8]
  ) throws {
    (self.next, self.recycle) = (next, recycle)
    expected = try content.blobByteCount
    (size, padded) = (UInt64(content.size), content.paddedByteCount)
    opener = Attachment.StreamOpener(
      keyring: try SyncBlobs.keys(keyring, targetID: targetID), record: content.sealedRecord(uid: uid))
  }

  /// The next piece of content: never empty before the end, empty at the
  /// end, which is told only after every rule held.
  ///
  /// - Throws: `SyncOutcome` (`too_large` at once when byte `L + 1`
  ///   arrives; `truncated`, `malformed_blob`, `unknown_epoch`,
  ///   `authentication_failed`, `bad_padding` at the end of the input);
  ///   the errors of `next`.
  func read() throws -> [UInt8] {
    while !ended {
      guard let bytes = try next() else {
        try finish()
        break
      }
      received += UInt64(bytes.count)
      guard received <= expected else { throw SyncOutcome.tooLarge }
      if refusal == nil {
        // One buffer for what this piece opens to, not a series of growing ones.
        output.reserveCapacity(bytes.count)
        do {
          try bytes.withUnsafeBytes { try opener.update($0, emit: take) }
        } catch let error as AttachmentError {
          refusal = Self.outcome(error)
        }
      }
      recycle(consume bytes)
      if !output.isEmpty { return handOut() }
    }
    return handOut()
  }

  /// The input ended: its length, then the first refusal, then the final
  /// chunk, the plaintext's length and the padding.
  private func finish() throws {
    guard received == expected else { throw SyncOutcome.truncated }
    if let refusal { throw refusal }
    do {
      _ = try opener.finish(emit: take)
    } catch let error as AttachmentError {
      throw Self.outcome(error)
    }
    guard opened == padded else { throw SyncOutcome.authenticationFailed }
    guard !paddingIsBad else { throw SyncOutcome.badPadding }
    ended = true
  }

  private func handOut() -> [UInt8] {
    defer { output = [] }
    return output
  }

  /// Verified plaintext: the first `size` bytes are content, the rest
  /// must be zeros.
  private func take(_ bytes: UnsafeRawBufferPointer) {
    let contentCount = Int(min(UInt64(bytes.count), size - min(size, opened)))
    output += bytes[..<contentCount]
    if !bytes[contentCount...].allSatisfy({ $0 == 0 }) { paddingIsBad = true }
    opened += UInt64(bytes.count)
  }

  /// The outcome of an attachment-format refusal.
  private static func outcome(_ error: AttachmentError) -> SyncOutcome {
    switch error {
    case .notSealed, .truncatedWrapper, .unsupportedVersion: .malformedBlob
    case .crypto(.unknownKeyID): .unknownEpoch
    default: .authenticationFailed
    }
  }
}
