import TaskCrypto
import TaskSystem

/// How long each step may take (docs/formats/pairing.md, "Time limits").
public struct PairingLimits: Sendable {
  /// How long an offer waits for its one peer: 10 minutes.
  public var offerWait: Double = 600
  /// How long the joiner waits for the connection: 10 seconds.
  public var connect: Double = 10
  /// How long each message may take to arrive whole: 30 seconds.
  public var message: Double = 30
  /// How long the whole exchange may take once connected: 120 seconds
  /// (a store of 8 MiB on a slow Wi-Fi fits).
  public var exchange: Double = 120

  /// The limits above.
  public init() {}
}

/// What a finished pairing shows: the verification string both screens
/// print, and the peer's address.
public struct PairingOutcome: Sendable, Equatable {
  /// Six digits, `123 456`, the same on both devices.
  public var verification: String
  /// The other device's address.
  public var peer: SocketAddress
}

/// `taskkey pair offer`'s side: waits for one joiner, proves the code,
/// sends the synchronisable store over the channel and waits for the
/// joiner to say its vault is written. It writes nothing anywhere.
public struct PairingOffer {
  private let listener: TCPListener
  private let code: PairingCode
  private let limits: PairingLimits

  /// An offer on `listener` (already listening) for `code`.
  public init(listener: TCPListener, code: PairingCode, limits: PairingLimits = PairingLimits()) {
    self.listener = listener
    self.code = code
    self.limits = limits
  }

  /// Runs the offer to its end: success, or the first failure. The
  /// listener is closed as soon as one peer connects, so a second one is
  /// refused by the kernel; one failed confirmation ends the offer.
  ///
  /// - Parameters:
  ///   - store: the synchronisable store's encoding to send.
  ///   - connected: called with the peer's address once it connects.
  ///   - confirmed: called with the verification string once the joiner's
  ///     tag verified, before the store is sent.
  /// - Returns: the outcome once the joiner said its vault is written.
  /// - Throws: `PairingError` (`.confirmationFailed(.offerer)` for a wrong
  ///   code or a changed message; `.network` with `.timedOut` when no one
  ///   came in time).
  public func run(
    store: SecureBytes, connected: (SocketAddress) -> Void = { _ in }, confirmed: (String) -> Void = { _ in }
  ) throws(PairingError) -> PairingOutcome {
    let connection = try PairingError.wrapping { try listener.accept(deadline: .after(seconds: limits.offerWait)) }
    listener.close()
    defer { connection.close() }
    connected(connection.peerAddress)
    let exchange = NetworkDeadline.after(seconds: limits.exchange)
    func deadline() -> NetworkDeadline { NetworkDeadline.after(seconds: limits.message).earlier(exchange) }
    do {
      let start = try PairingWire.read(connection, allowed: [.start], deadline: deadline())
      let sid = Array(start.body.prefix(PairingWire.sidByteCount))
      let ya = Array(start.body.suffix(PairingWire.elementByteCount))
      let identifier = PairingKeyExchange.channelIdentifier(
        offerer: connection.localAddress, joiner: connection.peerAddress)
      let response: PairingKeyExchange.Response
      do {
        response = try PairingKeyExchange.respond(prs: try code.passwordBytes(), ci: identifier, sid: sid, ya: ya)
      } catch PairingError.confirmationFailed(let role) {
        // Ya is not a valid element, or gives the identity: the same answer as a wrong tag.
        PairingWire.abort(connection, .confirmationFailed)
        throw PairingError.confirmationFailed(role: role)
      }
      try send(connection, PairingWire.header(.response) + response.yb + response.tb, deadline())
      let confirm = try PairingWire.read(connection, allowed: [.confirm], deadline: deadline())
      do {
        try response.keys.verifyPeerConfirmation(confirm.body)
      } catch {
        PairingWire.abort(connection, .confirmationFailed)
        throw PairingError.confirmationFailed(role: .offerer)
      }
      let verification = try PairingChannel.verificationString(isk: response.isk)
      confirmed(verification)
      var channel = try PairingChannel(isk: response.isk, role: .offerer)
      try send(connection, try channel.seal(.store, store), deadline())
      let done = try PairingWire.read(connection, allowed: [.done], deadline: deadline())
      guard try channel.open(prefix: done.prefix, body: done.body).count == 0 else {
        throw PairingError.protocolViolation("a done record that is not empty")
      }
      return PairingOutcome(verification: verification, peer: connection.peerAddress)
    } catch PairingError.protocolViolation(let what) {
      PairingWire.abort(connection, .protocolViolation)
      throw .protocolViolation(what)
    } catch PairingError.unsupportedVersion(let version) {
      PairingWire.abort(connection, .protocolViolation)
      throw .unsupportedVersion(version)
    } catch PairingError.channelTampered(let record) {
      PairingWire.abort(connection, .protocolViolation)
      throw .channelTampered(record: record)
    } catch let error as PairingError {
      throw error
    } catch {
      throw .protocolViolation("unexpected failure: \(type(of: error))")
    }
  }
}

/// `taskkey pair join`'s side: connects, proves the code, receives the
/// store, hands it to `accept` (which writes the vault), and says so.
public struct PairingJoin {
  private let address: SocketAddress
  private let code: PairingCode
  private let limits: PairingLimits

  /// A join of the offer at `address` with `code`.
  public init(address: SocketAddress, code: PairingCode, limits: PairingLimits = PairingLimits()) {
    self.address = address
    self.code = code
    self.limits = limits
  }

  /// Runs the join to its end.
  ///
  /// - Parameters:
  ///   - confirmed: called with the verification string once the
  ///     offerer's tag verified.
  ///   - accept: called with the store once it arrived and opened; it
  ///     writes the vault, or throws (the offerer is then told
  ///     `storeRefused` or `joinFailed` and the error is rethrown).
  /// - Returns: the outcome once the offerer was told the vault is written.
  /// - Throws: `PairingError`, or what `accept` threw.
  public func run(confirmed: (String) -> Void = { _ in }, accept: (SecureBytes) throws -> Void) throws
    -> PairingOutcome
  {
    let connection = try PairingError.wrapping {
      try TCPConnection.connect(to: address, deadline: .after(seconds: limits.connect))
    }
    defer { connection.close() }
    let exchange = NetworkDeadline.after(seconds: limits.exchange)
    func deadline() -> NetworkDeadline { NetworkDeadline.after(seconds: limits.message).earlier(exchange) }
    do {
      let sid = SecureRandom.bytes(count: PairingWire.sidByteCount)
      let identifier = PairingKeyExchange.channelIdentifier(
        offerer: connection.peerAddress, joiner: connection.localAddress)
      let started = try PairingKeyExchange.start(prs: try code.passwordBytes(), ci: identifier, sid: sid)
      try send(connection, PairingWire.header(.start) + sid + started.ya, deadline())
      let response = try PairingWire.read(connection, allowed: [.response], deadline: deadline())
      let yb = Array(response.body.prefix(PairingWire.elementByteCount))
      let tb = Array(response.body.suffix(PairingWire.tagByteCount))
      let finished: PairingKeyExchange.Finished
      do {
        finished = try started.finish(yb: yb, tb: tb)
      } catch PairingError.confirmationFailed {
        // An invalid Yb or a wrong Tb: a wrong code, or a changed message.
        PairingWire.abort(connection, .confirmationFailed)
        throw PairingError.confirmationFailed(role: .joiner)
      }
      try send(connection, PairingWire.header(.confirm) + finished.ta, deadline())
      let verification = try PairingChannel.verificationString(isk: finished.isk)
      confirmed(verification)
      var channel = try PairingChannel(isk: finished.isk, role: .joiner)
      let record = try PairingWire.read(connection, allowed: [.store], deadline: deadline())
      let store = try channel.open(prefix: record.prefix, body: record.body)
      do {
        try accept(store)
      } catch {
        PairingWire.abort(connection, error is PairingError ? .storeRefused : .joinFailed)
        throw error
      }
      try send(
        connection, try channel.seal(.done, try PairingError.wrapping { try SecureBytes(zeroedCount: 0) }),
        deadline())
      return PairingOutcome(verification: verification, peer: connection.peerAddress)
    } catch PairingError.protocolViolation(let what) {
      PairingWire.abort(connection, .protocolViolation)
      throw PairingError.protocolViolation(what)
    } catch PairingError.unsupportedVersion(let version) {
      PairingWire.abort(connection, .protocolViolation)
      throw PairingError.unsupportedVersion(version)
    } catch PairingError.channelTampered(let record) {
      PairingWire.abort(connection, .protocolViolation)
      throw PairingError.channelTampered(record: record)
    }
  }
}

/// Sends a whole message, as a `PairingError`.
private func send(_ connection: TCPConnection, _ bytes: [UInt8], _ deadline: NetworkDeadline) throws(PairingError) {
  try PairingError.wrapping { try connection.send(bytes, deadline: deadline) }
}
