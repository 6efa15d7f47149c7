import AssistantKeys

/// The assistant a verified key belongs to, as the gate uses it: the
/// public key id, the name, the trust level and the grants the gate knows.
public struct GateIdentity: Equatable, Sendable {
  /// The key's public id, safe to log and to put in receipts; nil in
  /// trusted mode (stdio without a key).
  public let keyID: AssistantKeyID?
  /// The assistant's name.
  public let name: String
  /// The trust level.
  public let trust: TrustLevel
  /// The grants the gate knows among the key's grants.
  public let grants: Set<GateGrant>

  /// Makes an identity.
  ///
  /// - Parameters:
  ///   - keyID: the public key id, nil for trusted mode.
  ///   - name: the assistant's name.
  ///   - trust: the trust level.
  ///   - grants: the gate grants.
  public init(keyID: AssistantKeyID?, name: String, trust: TrustLevel, grants: Set<GateGrant>) {
    self.keyID = keyID
    self.name = name
    self.trust = trust
    self.grants = grants
  }

  /// The identity of a key `AssistantKeyRegistry.verify` accepted.
  ///
  /// - Parameter identity: the verified identity.
  public init(_ identity: AssistantIdentity) {
    self.init(
      keyID: identity.id, name: identity.name, trust: identity.trust, grants: GateGrant.known(in: identity.grants))
  }
}
