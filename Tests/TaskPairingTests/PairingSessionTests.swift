import Foundation
import TaskCrypto
import TaskSystem
import Testing

@testable import TaskPairing

/// Offer and join over 127.0.0.1 in one process (each on its own thread):
/// the store arrives byte for byte with the same verification string on
/// both sides; a wrong code fails confirmation on both; and an offerer that
/// holds the right code but changes, drops or replays a channel record is
/// caught by the joiner, which then accepts nothing.
@Suite("Pairing sessions")
struct PairingSessionTests {
  private static func store(_ text: String) throws -> SecureBytes {
    try Array(text.utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
  }

  private static func listener() throws -> TCPListener {
    try TCPListener(addresses: [try SocketAddress(parsing: "127.0.0.1:0")])
  }

  /// Runs `body` on a new thread; `wait()` returns its result.
  private final class Background<Result>: @unchecked Sendable {
    private var result: Swift.Result<Result, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping () throws -> Result) {
      Thread {
        self.result = Swift.Result { try body() }
        self.done.signal()
      }.start()
    }

    func wait() -> Swift.Result<Result, any Error> {
      done.wait()
      return result!
    }
  }

  @Test func theStoreArrivesWholeAndBothSidesShowOneVerificationString() throws {
    let listener = try Self.listener()
    let code = PairingCode.generate()
    let sent = try Self.store(String(repeating: "note keys ", count: 100_000))
    let offer = Background { try PairingOffer(listener: listener, code: code).run(store: sent) }
    var received: SecureBytes?
    let joined = try PairingJoin(address: listener.addresses[0], code: code).run { received = $0 }
    let offered = try offer.wait().get()
    #expect(received == sent)
    #expect(joined.verification == offered.verification)
    #expect(joined.verification.count == 7)
    #expect(offered.peer.port != 0)
  }

  @Test func aWrongCodeFailsConfirmationOnBothSidesAndNothingIsAccepted() throws {
    let listener = try Self.listener()
    let code = PairingCode(indices: [1, 2, 3, 4])
    let offer = Background { try PairingOffer(listener: listener, code: code).run(store: try Self.store("keys")) }
    var accepted = false
    #expect {
      try PairingJoin(address: listener.addresses[0], code: PairingCode(indices: [1, 2, 3, 5])).run { _ in
        accepted = true
      }
    } throws: { $0 as? PairingError == .confirmationFailed(role: .joiner) }
    let ended = offer.wait()
    #expect(throws: PairingError.peerAborted(reason: .confirmationFailed)) { try ended.get() }
    #expect(!accepted)
  }

  /// An offerer that knows the code and runs the exchange honestly up to the
  /// channel, then sends what `tamper` makes of the sealed store record.
  private static func tamperingOffer(
    _ listener: TCPListener, _ code: PairingCode, tamper: @escaping ([UInt8]) -> [[UInt8]]
  ) -> Background<Void> {
    Background {
      let connection = try listener.accept(deadline: .after(seconds: 10))
      defer { connection.close() }
      let deadline = NetworkDeadline.after(seconds: 10)
      let start = try PairingWire.read(connection, allowed: [.start], deadline: deadline)
      let response = try PairingKeyExchange.respond(
        prs: try code.passwordBytes(),
        ci: PairingKeyExchange.channelIdentifier(offerer: connection.localAddress, joiner: connection.peerAddress),
        sid: Array(start.body.prefix(16)), ya: Array(start.body.suffix(32)))
      try connection.send(PairingWire.header(.response) + response.yb + response.tb, deadline: deadline)
      _ = try PairingWire.read(connection, allowed: [.confirm], deadline: deadline)
      var channel = try PairingChannel(isk: response.isk, role: .offerer)
      let record = try channel.seal(.store, try Self.store("the store"))
      for message in tamper(record) { try connection.send(message, deadline: deadline) }
      _ = try? PairingWire.read(connection, allowed: [.done], deadline: .after(seconds: 3))
    }
  }

  @Test(arguments: ["flips a ciphertext bit", "changes the header's type", "sends the record twice", "cuts it short"])
  func aChangedChannelRecordIsCaughtAndNothingIsAccepted(tampering: String) throws {
    let listener = try Self.listener()
    let code = PairingCode.generate()
    let offer = Self.tamperingOffer(listener, code) { record in
      switch tampering {
      case "flips a ciphertext bit": return [record.enumerated().map { $0.offset == 30 ? $0.element ^ 1 : $0.element }]
      case "changes the header's type":
        return [record.enumerated().map { $0.offset == 7 ? PairingMessageType.done.rawValue : $0.element }]
      case "sends the record twice": return [record, record]
      default: return [Array(record.dropLast(5))]
      }
    }
    var accepted: [SecureBytes] = []
    var limits = PairingLimits()
    limits.message = 2
    let outcome = Swift.Result {
      try PairingJoin(address: listener.addresses[0], code: code, limits: limits).run { accepted.append($0) }
    }
    _ = offer.wait()
    switch tampering {
    case "sends the record twice":
      // The first copy is genuine and is accepted; the joiner then says done and ends.
      // A second copy is never read as anything.
      #expect(accepted.count == 1)
    case "changes the header's type":
      #expect(throws: PairingError.self) { try outcome.get() }
      #expect(accepted.isEmpty)
    default:
      #expect(accepted.isEmpty)
      #expect {
        try outcome.get()
      } throws: { error in
        switch error as? PairingError {
        case .channelTampered(record: 0), .network: return true
        default: return false
        }
      }
    }
  }

  @Test func aPeerThatSendsNothingIsDroppedAtTheMessageDeadline() throws {
    let listener = try Self.listener()
    var limits = PairingLimits()
    limits.message = 0.3
    let offer = Background {
      try PairingOffer(listener: listener, code: PairingCode.generate(), limits: limits).run(
        store: try Self.store("x"))
    }
    let silent = try TCPConnection.connect(to: listener.addresses[0], deadline: .after(seconds: 5))
    #expect {
      try offer.wait().get()
    } throws: { error in
      guard case .network(.timedOut) = error as? PairingError else { return false }
      return true
    }
    silent.close()
  }
}
