import AssistantKeys
import TaskCrypto
import TaskVault

/// The bench's fixtures: registries and vaults at scale, filled in one
/// write each through the libraries' two bulk-write package seams
/// (`AssistantKeyRegistry.addUnverifiableEntries`, `Vault.setItems`); the
/// names and values the bench uses are chosen here.
extension AssistantKeyRegistry {
  /// Adds `count` active keys named `<prefix>-<n>` whose digests are
  /// random (none can verify) in one durable write: a million costs
  /// seconds, not a million locked pages.
  ///
  /// - Throws: as `addUnverifiableEntries(named:)`.
  func addFillerKeys(count: Int, prefix: String) throws {
    try addUnverifiableEntries(named: (0..<count).map { "\(prefix)-\($0)" })
  }
}

extension Vault {
  /// Stores `count` items named `<prefix><n>` (n zero-padded to 5 digits),
  /// each holding `valueByteCount` bytes of `0x61`, in the store of
  /// `itemClass`, in one write; the label is the name.
  ///
  /// - Throws: as `setItems(named:value:class:)`; `TaskCryptoError` when
  ///   locked memory is refused.
  func setItems(count: Int, prefix: String, valueByteCount: Int, class itemClass: VaultItemClass) throws {
    let names = (0..<count).map { index in
      let digits = String(index)
      return prefix + String(repeating: "0", count: max(0, 5 - digits.count)) + digits
    }
    let value = try SecureBytes(zeroedCount: valueByteCount)
    value.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0x61) }
    try setItems(named: names, value: value, class: itemClass)
  }
}
