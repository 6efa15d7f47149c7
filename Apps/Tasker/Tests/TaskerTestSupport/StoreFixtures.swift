import TaskCrypto
import TaskerCore

extension TemporaryDirectory {
  /// A new store at `t.db` in this directory, sealing under a new keyring.
  ///
  /// - Returns: the keyring, so a test can rotate it or open the database
  ///   again, and the store (keep the directory alive as long as the store).
  /// - Throws: `TaskerError` or `TaskCryptoError` when a step fails.
  public func newStore() throws -> (keyring: Keyring, store: TaskStore) {
    let keyring = try Keyring.generate()
    return (keyring, try TaskStore(databasePath: path("t.db"), keys: keyring))
  }
}

extension TaskDraft {
  /// A draft with a title and note text, every other field at its default.
  ///
  /// - Parameters:
  ///   - title: the title.
  ///   - notes: the note text.
  public init(title: String, notes: String) {
    self.init(title: title)
    self.notes = notes
  }
}

/// A reader for `addAttachment(…read:)` that hands out `bytes` in pieces of
/// at most `size` bytes, then empty arrays.
///
/// - Parameters:
///   - bytes: the whole content.
///   - size: the largest piece; 100,000 unless given.
/// - Returns: the reader.
public func chunkedReader(_ bytes: [UInt8], size: Int = 100_000) -> () -> [UInt8] {
  var offset = 0
  return {
    let end = min(bytes.count, offset + size)
    defer { offset = end }
    return Array(bytes[offset..<end])
  }
}

extension TaskStore {
  /// The whole content of attachment `id`, read through `readAttachment`.
  ///
  /// - Parameter id: the attachment's id.
  /// - Returns: its bytes, opened when sealed.
  /// - Throws: as `readAttachment(id:to:)`.
  public func attachmentContent(_ id: Int64) throws -> [UInt8] {
    var out = [UInt8]()
    try readAttachment(id: id) { out += $0 }
    return out
  }
}
