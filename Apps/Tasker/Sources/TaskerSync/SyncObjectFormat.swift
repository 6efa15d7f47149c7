import TaskCrypto

/// The target marker and the change object, byte for byte
/// (docs/formats/sync-storage.md): sealing, and reading by the rules in
/// their order.
public enum SyncObjectFormat {
  static let markerMagic = Array("TKSM".utf8)
  static let objectMagic = Array("TKSO".utf8)
  /// The marker's size.
  public static let markerByteCount = 54
  /// The header's size: magic, version, epoch, device id, seq.
  static let headerByteCount = 34
  /// Header, nonce and tag.
  static let overhead = headerByteCount + 12 + 16
  /// The smallest padded plaintext.
  public static let minimumPlaintext = 512
  /// The largest padded plaintext: 4 MiB.
  public static let maximumPlaintext = 4 << 20
  /// The largest object.
  public static let maximumObjectByteCount = maximumPlaintext + overhead

  // MARK: - Padding

  /// Padmé: the padded size of a plaintext of `length` bytes (at least
  /// the minimum).
  public static func paddedSize(_ length: Int) -> Int {
    let size = max(minimumPlaintext, length)
    let exponent = Int.bitWidth - 1 - size.leadingZeroBitCount
    let sizeOfExponent = Int.bitWidth - exponent.leadingZeroBitCount
    let mask = (1 << (exponent - sizeOfExponent)) - 1
    return (size + mask) & ~mask
  }

  /// The plaintext of a payload: its length, itself, zeros.
  static func pad(_ payload: [UInt8]) -> [UInt8] {
    let count = UInt32(payload.count)
    let size = paddedSize(4 + payload.count)
    // Made at its final size at once: growing it from the 4-byte prefix copied a MiB payload twice.
    var plain: [UInt8] = []
    plain.reserveCapacity(size)
    plain.append(contentsOf: [
      UInt8(count >> 24), UInt8(count >> 16 & 0xff), UInt8(count >> 8 & 0xff), UInt8(count & 0xff),
    ])
    plain.append(contentsOf: payload)
    plain.append(contentsOf: repeatElement(0, count: size - plain.count))
    return plain
  }

  /// The payload inside a padded plaintext.
  static func unpad(_ plain: [UInt8]) throws(SyncOutcome) -> [UInt8] {
    let length = Int(plain.prefix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
    guard length <= plain.count - 4, plain.count == paddedSize(4 + length),
      plain[(4 + length)...].allSatisfy({ $0 == 0 })
    else { throw .badPadding }
    return Array(plain[4..<(4 + length)])
  }

  // MARK: - Marker

  /// A marker for `targetID` under `key`.
  ///
  /// - Throws: `TaskCryptoError` from sealing.
  public static func marker(targetID: [UInt8], key: SyncKey) throws -> [UInt8] {
    let head = markerMagic + [0, 1] + bigEndian(key.epoch) + targetID
    let box = try AES.GCM.seal([UInt8](), using: try key.targetKey(for: targetID), authenticating: head)
    return head + box.combined
  }

  /// The target id a marker names, after its rules in order.
  ///
  /// - Throws: `SyncOutcome.malformedMarker`, `.unsupportedVersion`,
  ///   `.unknownEpoch`, `.notThisKey`.
  public static func openMarker(_ bytes: [UInt8], keyring: SyncKeyring) throws(SyncOutcome) -> [UInt8] {
    guard bytes.count == markerByteCount, Array(bytes[0..<4]) == markerMagic else { throw .malformedMarker }
    guard bytes[4] == 0, bytes[5] == 1 else { throw .unsupportedVersion }
    guard let key = keyring.key(epoch: readUInt32(bytes, at: 6)) else { throw .unknownEpoch }
    let targetID = Array(bytes[10..<26])
    do {
      let box = try AES.GCM.SealedBox(combined: bytes[26...])
      _ = try AES.GCM.open(box, using: try key.targetKey(for: targetID), authenticating: Array(bytes[0..<26]))
    } catch {
      throw .notThisKey
    }
    return targetID
  }

  // MARK: - Object

  /// Where an object belongs: its device and its seq (from 1).
  public struct Position: Sendable, Hashable {
    /// The writing device's id, 16 bytes.
    public let device: [UInt8]
    /// The object's number among the device's objects.
    public let seq: UInt64

    /// A position.
    public init(device: [UInt8], seq: UInt64) {
      self.device = device
      self.seq = seq
    }
  }

  /// Seals `payload` as the object at `position` of the target `targetID`.
  ///
  /// - Throws: `SyncOutcome.tooLarge` above 4 MiB padded; `TaskCryptoError`.
  public static func seal(
    _ payload: [UInt8], at position: Position, targetID: [UInt8], key: SyncKey
  ) throws -> [UInt8] {
    let plain = pad(payload)
    guard plain.count <= maximumPlaintext else { throw SyncOutcome.tooLarge }
    let header = objectMagic + [0, 1] + bigEndian(key.epoch) + position.device + bigEndian(position.seq)
    let box = try AES.GCM.seal(plain, using: try key.targetKey(for: targetID), authenticating: header + targetID)
    return header + box.combined
  }

  /// The payload of an object read from `position` and the epoch it was
  /// sealed at, after the reader's rules in order (the payload itself is
  /// read by `SyncPayload`).
  ///
  /// - Throws: `SyncOutcome` as the format names it.
  public static func open(
    _ bytes: [UInt8], at position: Position, targetID: [UInt8], keyring: SyncKeyring
  ) throws(SyncOutcome) -> (payload: [UInt8], epoch: UInt32) {
    guard bytes.count <= maximumObjectByteCount else { throw .tooLarge }
    guard bytes.count >= overhead + minimumPlaintext else { throw .truncated }
    guard Array(bytes[0..<4]) == objectMagic else { throw .malformedObject }
    guard bytes[4] == 0, bytes[5] == 1 else { throw .unsupportedVersion }
    guard Array(bytes[10..<26]) == position.device, readUInt64(bytes, at: 26) == position.seq, position.seq > 0
    else { throw .wrongPosition }
    guard let key = keyring.key(epoch: readUInt32(bytes, at: 6)) else { throw .unknownEpoch }
    let plain: [UInt8]
    do {
      let box = try AES.GCM.SealedBox(combined: bytes[headerByteCount...])
      plain = try AES.GCM.open(
        box, using: try key.targetKey(for: targetID), authenticating: Array(bytes[0..<headerByteCount]) + targetID)
    } catch {
      throw .authenticationFailed
    }
    return (try unpad(plain), key.epoch)
  }

  // MARK: - Integers

  static func bigEndian(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) }
  }
  static func bigEndian(_ value: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
  }
  static func readUInt32(_ bytes: [UInt8], at offset: Int) -> UInt32 {
    bytes[offset..<(offset + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
  }
  static func readUInt64(_ bytes: [UInt8], at offset: Int) -> UInt64 {
    bytes[offset..<(offset + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
  }
}
