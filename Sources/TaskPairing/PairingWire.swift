import TaskSystem

/// The messages of pairing version 1 on the wire (docs/formats/pairing.md,
/// "Messages"). Every message starts with the same 8 bytes: `TKPAIR`, the
/// version (1) and the type; its length follows from the type alone,
/// except a channel record, whose 4-byte length is bounded before anything
/// is read into memory.
public enum PairingMessageType: UInt8, Sendable, CaseIterable {
  /// Joiner to offerer: sid (16 bytes) and CPace's Ya (32 bytes).
  case start = 0x01
  /// Offerer to joiner: CPace's Yb (32 bytes) and the offerer's
  /// confirmation tag Tb (64 bytes).
  case response = 0x02
  /// Joiner to offerer: the joiner's confirmation tag Ta (64 bytes).
  case confirm = 0x03
  /// Offerer to joiner, sealed: the synchronisable store.
  case store = 0x10
  /// Joiner to offerer, sealed, empty: the vault is written.
  case done = 0x11
  /// Either way: the pairing ends; one reason byte.
  case abort = 0x7F

  /// The bytes after the 8-byte header, for the fixed-size types.
  var fixedBodyByteCount: Int? {
    switch self {
    case .start: return PairingWire.sidByteCount + PairingWire.elementByteCount
    case .response: return PairingWire.elementByteCount + PairingWire.tagByteCount
    case .confirm: return PairingWire.tagByteCount
    case .abort: return 1
    case .store, .done: return nil
    }
  }
}

/// Framing: the header, the limits, reading one message with a deadline.
enum PairingWire {
  /// `TKPAIR`.
  static let magic: [UInt8] = Array("TKPAIR".utf8)
  /// The only version this build speaks.
  static let version: UInt8 = 1
  /// Header bytes: magic, version, type.
  static let headerByteCount = 8
  /// A session identifier: 16 random bytes the joiner picks.
  static let sidByteCount = 16
  /// An encoded ristretto255 element.
  static let elementByteCount = 32
  /// A confirmation tag (HMAC-SHA-512).
  static let tagByteCount = 64
  /// The largest sealed record: a nonce, a store of at most 8 MiB, a tag.
  static let maximumRecordByteCount = 12 + (8 << 20) + 16
  /// The smallest sealed record: a nonce and a tag around nothing.
  static let minimumRecordByteCount = 12 + 16

  /// The header of a message of `type`.
  static func header(_ type: PairingMessageType) -> [UInt8] { magic + [version, type.rawValue] }

  /// One message read off `connection`: its type and body, checked against
  /// what may come now. An abort from the peer throws `.peerAborted`.
  ///
  /// - Parameters:
  ///   - allowed: the types that may come at this step (abort always may).
  ///   - deadline: when the whole message must have arrived.
  /// - Throws: `PairingError.protocolViolation` (wrong magic, a type not
  ///   allowed now, a record length out of bounds), `.unsupportedVersion`,
  ///   `.peerAborted`, `.network` (timeout, closed).
  static func read(_ connection: TCPConnection, allowed: [PairingMessageType], deadline: NetworkDeadline)
    throws(PairingError) -> (type: PairingMessageType, prefix: [UInt8], body: [UInt8])
  {
    let header = try PairingError.wrapping { try connection.receive(count: headerByteCount, deadline: deadline) }
    let type = try parseHeader(header, allowed: allowed)
    if let fixed = type.fixedBodyByteCount {
      let body = try PairingError.wrapping { try connection.receive(count: fixed, deadline: deadline) }
      if type == .abort {
        throw .peerAborted(reason: PairingAbortReason(rawValue: body[0]) ?? .protocolViolation)
      }
      return (type, header, body)
    }
    let lengthBytes = try PairingError.wrapping { try connection.receive(count: 4, deadline: deadline) }
    let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
    guard length >= minimumRecordByteCount, length <= maximumRecordByteCount else {
      throw .protocolViolation(
        "a record of \(length) bytes (allowed: \(minimumRecordByteCount) to "
          + "\(maximumRecordByteCount))")
    }
    let body = try PairingError.wrapping { try connection.receive(count: length, deadline: deadline) }
    return (type, header + lengthBytes, body)
  }

  /// The type of an 8-byte header, checked in the reader's order: the
  /// magic, the version, a type allowed now (abort always is).
  ///
  /// - Throws: `.protocolViolation`, `.unsupportedVersion`.
  static func parseHeader(_ header: [UInt8], allowed: [PairingMessageType]) throws(PairingError) -> PairingMessageType {
    guard header.count == headerByteCount, Array(header.prefix(6)) == magic else {
      throw .protocolViolation("a message without the TKPAIR header")
    }
    guard header[6] == version else { throw .unsupportedVersion(header[6]) }
    guard let type = PairingMessageType(rawValue: header[7]), type == .abort || allowed.contains(type) else {
      throw .protocolViolation("message type \(header[7]) where \(allowed.map(\.rawValue)) was expected")
    }
    return type
  }

  /// Sends `abort` with `reason`, ignoring failures: the peer may be gone.
  static func abort(_ connection: TCPConnection, _ reason: PairingAbortReason) {
    try? connection.send(header(.abort) + [reason.rawValue], deadline: .after(seconds: 2))
  }
}
