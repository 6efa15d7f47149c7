/// A note key: a 256-bit AES-GCM key and the id that names it in sealed
/// values.
public struct NoteKey: Sendable, Equatable, CustomStringConvertible {
  /// The key's id, written into every value it seals.
  public let id: KeyID
  /// The key itself.
  public let key: SymmetricKey
  /// The sealed-value marker `tc1.<kid>:` for this key, built once.
  let marker: SealedValue.Marker

  /// Pairs an id with a key.
  public init(id: KeyID, key: SymmetricKey) {
    self.id = id
    self.key = key
    self.marker = SealedValue.Marker(keyID: id)
  }

  /// Makes a new random key with a random id not in `taken`.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable` when locked memory
  ///   cannot be allocated.
  public static func generate(avoiding taken: Set<KeyID> = []) throws -> NoteKey {
    var id = KeyID.random()
    while taken.contains(id) { id = KeyID.random() }
    return NoteKey(id: id, key: try SymmetricKey.generate())
  }

  /// Length of a key-file line without its newline: 8 + 1 + 64.
  public static let keyFileLineByteCount = 73

  /// Parses a key file: one line `<8 hex kid>:<64 hex key>`, lowercase hex,
  /// optionally followed by a single `\n`. Nothing else is accepted: no
  /// spaces, no `\r`, no second line.
  ///
  /// - Parameter contents: the file's bytes; the caller wipes them after.
  /// - Throws: `TaskCryptoError.malformedKeyFile` naming the defect (never
  ///   the key bytes).
  public static func parseKeyFile(_ contents: UnsafeRawBufferPointer) throws -> NoteKey {
    var length = contents.count
    if length == keyFileLineByteCount + 1 && contents[keyFileLineByteCount] == UInt8(ascii: "\n") {
      length -= 1
    }
    guard length == keyFileLineByteCount else {
      throw TaskCryptoError.malformedKeyFile(
        reason: "expected 73 characters (plus an optional newline), found \(contents.count) bytes")
    }
    guard contents[8] == UInt8(ascii: ":") else {
      throw TaskCryptoError.malformedKeyFile(reason: "the 9th character must be ':'")
    }
    var idBytes = [UInt8](repeating: 0, count: 4)
    let idOK = idBytes.withUnsafeMutableBytes {
      Hex.decode(UnsafeRawBufferPointer(rebasing: contents[0..<8]), into: $0)
    }
    guard idOK else {
      throw TaskCryptoError.malformedKeyFile(reason: "the key id is not 8 lowercase hex digits")
    }
    let key = try SecureBytes(zeroedCount: SymmetricKey.byteCount)
    let keyOK = key.withUnsafeMutableBytes {
      Hex.decode(UnsafeRawBufferPointer(rebasing: contents[9..<keyFileLineByteCount]), into: $0)
    }
    guard keyOK else {
      throw TaskCryptoError.malformedKeyFile(reason: "the key is not 64 lowercase hex digits")
    }
    let id = KeyID(rawValue: idBytes.reduce(0) { $0 << 8 | UInt32($1) })
    return NoteKey(id: id, key: SymmetricKey(checked: key))
  }

  /// The key-file line `<kid>:<key hex>\n` in locked memory, for writing to
  /// a 0600 file.
  ///
  /// - Throws: `TaskCryptoError.resourceUnavailable`.
  public func keyFileBytes() throws -> SecureBytes {
    let line = try SecureBytes(zeroedCount: Self.keyFileLineByteCount + 1)
    line.withUnsafeMutableBytes { out in
      for (index, byte) in Array(id.hex.utf8).enumerated() { out[index] = byte }
      out[8] = UInt8(ascii: ":")
      key.withUnsafeBytes { Hex.encode($0, into: UnsafeMutableRawBufferPointer(rebasing: out[9...])) }
      out[Self.keyFileLineByteCount] = UInt8(ascii: "\n")
    }
    return line
  }

  /// `NoteKey(<kid>, redacted)`: the key bytes are never shown.
  public var description: String { "NoteKey(\(id), redacted)" }
}
