import CommandKit
import TaskAttachments
import TaskCrypto
import TaskSystem

/// The `content` of an attachment record (docs/formats/sync-storage.md,
/// *The attachment record*): which blob holds it and how long it is.
public struct SyncAttachmentContent: Sendable, Equatable {
  /// The device that wrote the blob (32 hex).
  public var device: String
  /// The blob's name (32 hex).
  public var blob: String
  /// The content's length in bytes.
  public var size: Int64

  /// A content.
  public init(device: String, blob: String, size: Int64) {
    (self.device, self.blob, self.size) = (device, blob, size)
  }

  /// Reads a `content` value: exactly `device`, `blob` and `size`.
  ///
  /// - Returns: nil for any other value.
  public init?(_ value: JSONValue) {
    guard case .object(let members) = value, members.count == 3, case .string(let device) = members["device"],
      SyncHex.isID(device), case .string(let blob) = members["blob"], SyncHex.isID(blob),
      case .integer(let size) = members["size"], (0...SyncPayload.largestInteger).contains(size)
    else { return nil }
    (self.device, self.blob, self.size) = (device, blob, size)
  }

  /// The value as the record writes it.
  public var value: JSONValue { ["device": .string(device), "blob": .string(blob), "size": .integer(size)] }

  /// Reads an `owner` value, `task/<32 hex>` or `page/<32 hex>`.
  ///
  /// - Returns: the owner's kind and id, or nil.
  public static func owner(_ text: String) -> (kind: SyncRecord.Kind, id: String)? {
    let parts = text.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, let kind = SyncRecord.Kind(rawValue: String(parts[0])), kind != .attachment,
      SyncHex.isID(String(parts[1]))
    else { return nil }
    return (kind, String(parts[1]))
  }

  /// The padded plaintext's length P: Padmé of the size, at least 512.
  public var paddedByteCount: UInt64 { UInt64(SyncObjectFormat.paddedSize(Int(size))) }

  /// The blob's exact length L.
  ///
  /// - Throws: `SyncOutcome.tooLarge` for a size past what the attachment
  ///   format can seal.
  public var blobByteCount: UInt64 {
    get throws {
      guard let count = try? Attachment.sealedByteCount(plaintextByteCount: paddedByteCount) else {
        throw SyncOutcome.tooLarge
      }
      return count
    }
  }

  /// The record name the blob is sealed for: `sync/attachment/<uid>/<blob>`.
  public func sealedRecord(uid: String) -> String { "sync/attachment/\(uid)/\(blob)" }
}

extension SyncRecord {
  /// The `content` of an attachment record, or nil when it has none or
  /// it breaks its rules.
  var content: SyncAttachmentContent? { fields["content"].flatMap { SyncAttachmentContent($0.value) } }
}

/// Sealing blobs (docs/formats/sync-storage.md, *The blob*): the
/// attachment format under the blob key of an epoch, the content padded
/// with zeros, streamed into a file in flat memory. `SyncBlobReader`
/// opens them as they stream in.
enum SyncBlobs {
  /// The blob keys of every epoch of `keyring` for `targetID`, as a note
  /// keyring whose key ids are the epochs (the newest primary).
  ///
  /// - Throws: `TaskCryptoError` when locked memory is refused.
  static func keys(_ keyring: SyncKeyring, targetID: [UInt8]) throws -> Keyring {
    let keys = try keyring.entries.map {
      NoteKey(id: KeyID(rawValue: $0.epoch), key: try $0.attachmentKey(for: targetID))
    }
    return try Keyring(keys: keys, primaryID: KeyID(rawValue: keyring.newest.epoch))
  }

  /// Seals `content` (pulled in chunks, exactly `size` bytes) as the blob
  /// of `uid` under the newest epoch, its bytes given to `write` in order.
  /// A content of another length is found only once the blob's last bytes
  /// are sealed: whoever sends them must hold them back until this returns
  /// (`SyncBlobSource`).
  ///
  /// - Throws: `SyncError.attachmentUnsendable` naming `attachment` when
  ///   the content is not `size` bytes; the content's and `write`'s errors.
  static func seal(
    _ read: @escaping () throws -> [UInt8], content: SyncAttachmentContent, uid: String, keyring: SyncKeyring,
    targetID: [UInt8], attachment: Int64, into write: (UnsafeRawBufferPointer) throws -> Void
  ) throws {
    let keys = try Self.keys(keyring, targetID: targetID)
    let source = PaddedSource(read, size: UInt64(content.size), padded: content.paddedByteCount)
    _ = try Attachment.seal(
      reading: source.fill, writing: { try write($0) }, using: keys, record: content.sealedRecord(uid: uid))
    guard source.sawExactSize else {
      throw SyncError.attachmentUnsendable(attachment: attachment, reason: "its content is not the length recorded")
    }
  }
}

/// A content of `size` bytes followed by zeros up to `padded` bytes, read
/// into buffers as TaskAttachments asks for them.
final class PaddedSource {
  private let read: () throws -> [UInt8]
  private let size: UInt64
  private let padded: UInt64
  private var pending: [UInt8] = []
  private var offset = 0
  private var given: UInt64 = 0
  private var ended = false
  /// Whether the content ended at exactly `size` bytes.
  private(set) var sawExactSize = true

  init(_ read: @escaping () throws -> [UInt8], size: UInt64, padded: UInt64) {
    (self.read, self.size, self.padded) = (read, size, padded)
  }

  /// Fills `buffer`; 0 only at the end of the padded length.
  func fill(_ buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    guard given < padded, !buffer.isEmpty else { return 0 }
    if given < size {
      if offset >= pending.count {
        pending = try read()
        offset = 0
        if pending.isEmpty {
          sawExactSize = false
          return 0
        }
      }
      let count = Int(min(UInt64(buffer.count), UInt64(pending.count - offset), size - given))
      pending.withUnsafeBytes {
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[offset..<offset + count]))
      }
      offset += count
      given += UInt64(count)
      if given == size {
        // The content must end here: nothing left over, nothing more to read.
        let more = try offset < pending.count || !read().isEmpty
        if more { sawExactSize = false }
      }
      return count
    }
    let count = Int(min(UInt64(buffer.count), padded - given))
    buffer.baseAddress!.initializeMemory(as: UInt8.self, repeating: 0, count: count)
    given += UInt64(count)
    return count
  }
}
