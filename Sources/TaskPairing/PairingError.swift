import TaskCrypto
import TaskSystem

/// Every way pairing can fail. No case carries key material, the code's
/// words or the store; a peer's bytes appear only as counts and type
/// numbers.
public enum PairingError: Error, Equatable, Sendable {
  /// The code as typed is not four words of the list; nothing was sent.
  case codeNotRead(String)
  /// Key confirmation failed: the code was wrong, or someone between the
  /// devices changed, replayed or reordered a message. The offer has ended.
  case confirmationFailed(role: PairingRole)
  /// The peer said it refused the pairing (it found the confirmation wrong,
  /// or could not use what arrived); the reason is its code number.
  case peerAborted(reason: PairingAbortReason)
  /// A message was not what the protocol allows at this step: wrong magic,
  /// type, length or order. The connection was dropped.
  case protocolViolation(String)
  /// The peer speaks a pairing version this build does not.
  case unsupportedVersion(UInt8)
  /// A sealed record of the channel failed authentication or came out of
  /// order: the connection was tampered with.
  case channelTampered(record: UInt64)
  /// The store that arrived is not a synchronisable store this build can
  /// hold; nothing was written.
  case storeRefused(String)
  /// The network failed: a timeout, a refused or closed connection.
  case network(SystemError)
  /// A cryptographic operation failed (locked memory, the library).
  case crypto(TaskCryptoError)

  /// Runs `body`, wrapping TaskCrypto and TaskSystem errors.
  static func wrapping<Result>(_ body: () throws -> Result) throws(PairingError) -> Result {
    do {
      return try body()
    } catch let error as PairingError {
      throw error
    } catch let error as TaskCryptoError {
      throw .crypto(error)
    } catch let error as SystemError {
      throw .network(error)
    } catch {
      throw .protocolViolation("unexpected failure: \(type(of: error))")
    }
  }
}

/// Which side of a pairing: the device that has the keys and offers, or
/// the new device that joins.
public enum PairingRole: String, Sendable {
  /// `taskkey pair offer`: CPace's responder.
  case offerer
  /// `taskkey pair join`: CPace's initiator.
  case joiner
}

/// Why a peer ended a pairing, as the one byte of an abort message
/// (docs/formats/pairing.md, "Abort").
public enum PairingAbortReason: UInt8, Sendable {
  /// The confirmation tag did not verify.
  case confirmationFailed = 1
  /// A message broke the protocol.
  case protocolViolation = 2
  /// The store could not be used; nothing was written.
  case storeRefused = 3
  /// The joining device could not write its vault.
  case joinFailed = 4
}

extension PairingError: CustomStringConvertible {
  /// One line that says what happened and what to do next.
  public var description: String {
    switch self {
    case .codeNotRead(let reason): return "the code was not read: \(reason); nothing was sent, type it again"
    case .confirmationFailed(.offerer):
      return "key confirmation failed: a wrong code, or someone between the devices; the offer has ended, "
        + "run 'taskkey pair offer' again for a new code"
    case .confirmationFailed(.joiner):
      return "key confirmation failed: a wrong code, or someone between the devices; the offer has ended "
        + "on the other device too; ask for a new code"
    case .peerAborted(let reason):
      switch reason {
      case .confirmationFailed:
        return "the other device found the key confirmation wrong (a wrong code, or someone between the "
          + "devices); the offer has ended"
      case .protocolViolation: return "the other device refused a message; the pairing has ended"
      case .storeRefused: return "the joining device could not use the keys it received; nothing was written"
      case .joinFailed: return "the joining device could not write its vault; nothing changed here"
      }
    case .protocolViolation(let what): return "the other device broke the pairing protocol: \(what); dropped"
    case .unsupportedVersion(let version):
      return "the other device speaks pairing version \(version); this taskkey speaks version 1; update both"
    case .channelTampered(let record):
      return "record \(record) of the pairing channel failed authentication: the connection was tampered with"
    case .storeRefused(let reason): return "the keys received cannot be used: \(reason); nothing was written"
    case .network(let error): return "pairing connection: \(error)"
    case .crypto(let error): return "pairing crypto failed: \(error)"
    }
  }
}
