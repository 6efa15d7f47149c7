import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import Testing

@testable import TaskVault

@Suite("Durable writes: a fault at any step leaves a readable vault")
struct DurableWriteTests {
  @Test(arguments: FileStep.allCases)
  func aFaultAtAnyStepLeavesTheOldOrTheNewGeneration(step: FileStep) throws {
    let machine = try TestMachine()
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("old"), named: "item", class: .afterFirstUnlock)
    for skip in 0..<3 {
      machine.fileSystem.failOn = step
      machine.fileSystem.skip = skip
      do {
        try vault.setItem(secret("new-\(step)-\(skip)"), named: "item", class: .afterFirstUnlock)
      } catch TaskVaultError.system(.failed(step.rawValue, _, EIO)) {
      }
      machine.fileSystem.failOn = nil
      let value = String(decoding: bytes(of: try machine.open().item(named: "item").value), as: UTF8.self)
      #expect(value == "old" || value.hasPrefix("new-"), "step \(step), skip \(skip)")
      let names = try FileManager.default.contentsOfDirectory(atPath: machine.vaultDirectory)
      #expect(!names.contains("vault.tkv.tmp"), "step \(step), skip \(skip): temporary file left")
    }
  }

  @Test func aCompletedWriteLeavesNoBackupOrTemporaryFile() throws {
    let machine = try TestMachine()
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("v"), named: "item", class: .afterFirstUnlock)
    try vault.setItem(secret("d"), named: "device", class: .afterFirstUnlockThisDeviceOnly)
    let names = Set(try FileManager.default.contentsOfDirectory(atPath: machine.vaultDirectory))
    #expect(names == ["vault.tkv", "vault.lock", "device-only"])
    let deviceNames = Set(try FileManager.default.contentsOfDirectory(atPath: machine.vaultDirectory + "/device-only"))
    #expect(deviceNames == ["device.tkv", "unlock.session", "CACHEDIR.TAG", ".nobackup"])
  }

  @Test func generationCountsWrites() throws {
    let machine = try TestMachine()
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    for index in 0..<3 { try vault.setItem(secret("\(index)"), named: "item", class: .afterFirstUnlock) }
    #expect(try vault.status().generation == 4)
  }
}
