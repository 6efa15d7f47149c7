import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

/// The committed good vault vector opens through the full `Vault`, not only
/// through the vector checker (the generator lives in TaskKeyCLITests, beside
/// the JSON schema it writes).
@Suite("Committed vault vectors")
struct VaultVectorTests {
  static let vectors = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Vectors")
  static let passphrase = "correct horse battery staple"

  @Test func theGoodVaultVectorOpensThroughTheFullVaultToo() throws {
    let machine = try TestMachine()
    try FileManager.default.createDirectory(atPath: machine.vaultDirectory, withIntermediateDirectories: false)
    chmod(machine.vaultDirectory, 0o700)
    try machine.writeVault(
      [UInt8](try Data(contentsOf: Self.vectors.appendingPathComponent("vault-v1/vault.tkv"))))
    let vault = try machine.open()
    try vault.unlock(passphrase: secret(Self.passphrase))
    #expect(try vault.noteKeyring().primaryID.hex == "0badcafe")
    // Without its device-only file the vault opens with an empty device-only store ...
    #expect(throws: TaskVaultError.itemNotFound(name: "provider/openai")) {
      _ = try vault.item(named: "provider/openai")
    }
    // ... and with it, the device-only item is back.
    let devicePath = machine.vaultDirectory + "/device-only/device.tkv"
    try Data(contentsOf: Self.vectors.appendingPathComponent("vault-v1/device.tkv"))
      .write(to: URL(fileURLWithPath: devicePath))
    chmod(devicePath, 0o600)
    #expect(bytes(of: try vault.item(named: "provider/openai").value) == Array("sk-test-DEVICE-ONLY-0123456789".utf8))
  }

}
