import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import Testing

@testable import TaskVault

@Suite("Vault: every bad input is a distinct error and nothing is written")
struct VaultRejectionTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  /// Runs `body`, which must fail with `expected`, and checks that the vault
  /// directory is byte for byte as before.
  func expectRefused(_ expected: TaskVaultError, _ body: () throws -> Void) throws {
    let before = try snapshot()
    #expect(throws: expected) { try body() }
    #expect(try snapshot() == before, "nothing written")
  }

  func snapshot() throws -> [String: [UInt8]] {
    var files = [String: [UInt8]]()
    // Both the vault directory and its device-only subdirectory.
    for directory in [machine.vaultDirectory, machine.vaultDirectory + "/device-only"] {
      for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
      where name != "vault.lock" && name != "device-only" {
        files[directory + "/" + name] = [UInt8](try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)))
      }
    }
    return files
  }

  @Test func wrongPassphraseIsItsOwnError() throws {
    let vault = try machine.create()
    try expectRefused(.wrongPassphrase) { try vault.unlock(passphrase: secret("wrong")) }
  }

  /// The device-only file's checks that need no key run before the KDF
  /// (docs/formats/vault-file.md, step 6), so its fault is reported even
  /// with a wrong passphrase, never hidden behind "wrong passphrase".
  @Test func aDeviceOnlyFaultIsReportedBeforeTheKDFEvenWithAWrongPassphrase() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("sk-device-only"), named: "openai", class: .afterFirstUnlockThisDeviceOnly)
    try vault.lock()
    let path = machine.vaultDirectory + "/device-only/device.tkv"
    var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    bytes[bytes.count - 1] ^= 0x01
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    let before = try snapshot()
    #expect {
      try vault.unlock(passphrase: secret("wrong"))
    } throws: { error in
      guard case .damaged(let damagedPath, _) = error as? TaskVaultError else { return false }
      return damagedPath == path
    }
    #expect(try snapshot() == before, "nothing written")
  }

  @Test func emptyPassphraseIsItsOwnError() throws {
    let vault = try machine.create()
    try expectRefused(.emptyPassphrase) { try vault.unlock(passphrase: try SecureBytes(zeroedCount: 0)) }
    #expect(throws: TaskVaultError.emptyPassphrase) { _ = try machine.create("", at: machine.home.path("other")) }
  }

  @Test func overlongPassphraseIsRefused() throws {
    let vault = try machine.create()
    try expectRefused(.passphraseTooLong(limit: 1024)) {
      try vault.unlock(passphrase: try SecureBytes(zeroedCount: 1025))
    }
  }

  @Test func truncatedFileIsDamaged() throws {
    _ = try machine.create()
    let bytes = try machine.vaultBytes()
    for length in [0, 9, 100, bytes.count - 33, bytes.count - 1] {
      try machine.writeVault(Array(bytes[..<length]))
      let vault = try machine.open()
      let before = try snapshot()
      do {
        try vault.unlock(passphrase: secret("correct horse"))
        Issue.record("length \(length) opened")
      } catch TaskVaultError.damaged {
      } catch {
        Issue.record("length \(length): \(error)")
      }
      #expect(try snapshot() == before, "nothing written")
    }
  }

  @Test func unknownVersionIsUnsupported() throws {
    _ = try machine.create()
    var bytes = try machine.vaultBytes()
    bytes[9] = 2
    try machine.writeVault(fixChecksum(bytes))
    let vault = try machine.open()
    try expectRefused(.unsupportedVersion(path: machine.vaultDirectory + "/vault.tkv", version: 2)) {
      try vault.unlock(passphrase: secret("correct horse"))
    }
  }

  @Test func missingVaultIsNotInitialised() throws {
    #expect(throws: TaskVaultError.notInitialised(path: machine.vaultDirectory)) { _ = try machine.open() }
    _ = try machine.create()
    unlink(machine.vaultDirectory + "/vault.tkv")
    #expect(throws: TaskVaultError.notInitialised(path: machine.vaultDirectory + "/vault.tkv")) {
      _ = try machine.open()
    }
  }

  @Test func aStoreCutFromTheFileIsDamaged() throws {
    _ = try machine.create()
    let bytes = try machine.vaultBytes()
    // Drop the store section (the device-only store has its own file) and re-checksum.
    let cut = Array(bytes[..<129]) + [UInt8](repeating: 0, count: 32)
    try machine.writeVault(fixChecksum(cut))
    let before = try snapshot()
    do {
      try machine.open().unlock(passphrase: secret("correct horse"))
      Issue.record("opened")
    } catch TaskVaultError.damaged(_, let reason) {
      #expect(reason.contains("truncated") || reason.contains("missing"), "\(reason)")
    }
    #expect(try snapshot() == before, "nothing written")
  }

  @Test func looseFilePermissionsAreRefusedWithTheFix() throws {
    let vault = try machine.create()
    let path = machine.vaultDirectory + "/vault.tkv"
    chmod(path, 0o644)
    try expectRefused(.system(.loosePermissions(path: path, mode: 0o644, fix: "chmod 600 '\(path)'"))) {
      try vault.unlock(passphrase: secret("correct horse"))
    }
  }

  @Test func looseDirectoryPermissionsAreRefusedWithTheFix() throws {
    _ = try machine.create()
    chmod(machine.vaultDirectory, 0o755)
    let path = machine.vaultDirectory
    #expect(throws: TaskVaultError.system(.loosePermissions(path: path, mode: 0o755, fix: "chmod 700 '\(path)'"))) {
      _ = try machine.open()
    }
  }

  @Test func aSymlinkedVaultFileIsRefused() throws {
    _ = try machine.create()
    let path = machine.vaultDirectory + "/vault.tkv"
    rename(path, machine.home.path("elsewhere.tkv"))
    symlink(machine.home.path("elsewhere.tkv"), path)
    #expect(throws: TaskVaultError.self) { _ = try machine.open() }
  }

  @Test func costsAboveTheCapsAreRefusedBeforeAnyDerivation() throws {
    _ = try machine.create()
    var bytes = try machine.vaultBytes()
    bytes[27] = KDFPreset.calibrated.rawValue
    bytes.replaceSubrange(32..<36, with: [0xff, 0xff, 0xff, 0xff])  // 4 TiB of memory
    bytes.replaceSubrange(28..<32, with: [0, 0, 0, 3])
    try machine.writeVault(fixChecksum(bytes))
    let clock = ContinuousClock()
    let elapsed = clock.measure {
      #expect(throws: TaskVaultError.self) { try machine.open().unlock(passphrase: secret("correct horse")) }
    }
    #expect(elapsed < .seconds(1))
  }

  @Test func calibratedCostsBelowTheFloorAreRefused() throws {
    _ = try machine.create()
    var bytes = try machine.vaultBytes()
    bytes[27] = KDFPreset.calibrated.rawValue  // claims calibrated with t=1, m=8 MiB
    try machine.writeVault(fixChecksum(bytes))
    do {
      try machine.open().unlock(passphrase: secret("correct horse"))
      Issue.record("opened")
    } catch TaskVaultError.damaged(_, let reason) {
      #expect(reason.contains("below the floor"))
    }
  }

  @Test func everyFlippedByteIsDetectedByTheChecksum() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("v"), named: "n", class: .afterFirstUnlock)
    let original = try machine.vaultBytes()
    for index in original.indices {
      var bytes = original
      bytes[index] ^= 0x01
      try machine.writeVault(bytes)
      do {
        _ = try vault.items()
        Issue.record("byte \(index) flipped went unnoticed")
      } catch TaskVaultError.damaged {
      } catch TaskVaultError.unsupportedVersion where index == 8 || index == 9 {
      } catch {
        Issue.record("byte \(index): unexpected \(error)")
      }
    }
  }

  @Test func everyFlippedByteWithARecomputedChecksumIsStillRefused() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("v"), named: "n", class: .afterFirstUnlockThisDeviceOnly)
    try vault.lock()
    let original = try machine.vaultBytes()
    // Every header byte, then every 5th byte of the store (a dense sample).
    let indices = Array(0..<134) + Array(stride(from: 134, to: original.count - 32, by: 5))
    for index in indices {
      var bytes = original
      bytes[index] ^= 0x80
      try machine.writeVault(fixChecksum(bytes))
      do {
        try vault.unlock(passphrase: secret("correct horse"))
        Issue.record("byte \(index) flipped was accepted")
      } catch let error as TaskVaultError {
        switch (index, error) {
        case (0..<8, .damaged), (8..<10, .unsupportedVersion): break
        // The vault id: the device-only file no longer matches it, which
        // its checks report before the KDF runs.
        case (10..<26, .damaged): break
        case (36..<60, .wrongPassphrase): break  // KDF input or wrap AAD
        case (28..<36, .damaged): break  // the fast preset admits exactly one cost pair
        case (26..<28, .damaged): break  // algorithm and preset bytes are checked first
        case (60, .damaged): break  // store id byte
        case (61..<121, .wrongPassphrase): break  // the one wrapped key fails: indistinguishable
        case (121..<129, .tampered): break  // the generation is in the store's AAD
        case (129..<134, .damaged): break  // store id and length
        case (134..., .tampered), (134..., .damaged): break
        default: Issue.record("byte \(index): unexpected \(error)")
        }
      }
    }
  }

  @Test func everyFlippedDeviceOnlyFileByteWithARecomputedChecksumIsStillRefused() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    try vault.setItem(secret("v"), named: "n", class: .afterFirstUnlockThisDeviceOnly)
    let path = machine.vaultDirectory + "/device-only/device.tkv"
    let original = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    let indices = Array(0..<100) + Array(stride(from: 100, to: original.count - 32, by: 7))
    for index in indices {
      var bytes = original
      bytes[index] ^= 0x80
      try Data(fixChecksum(bytes)).write(to: URL(fileURLWithPath: path))
      do {
        _ = try vault.items()
        Issue.record("device-only byte \(index) flipped was accepted")
      } catch let error as TaskVaultError {
        switch (index, error) {
        case (0..<8, .damaged), (8..<10, .unsupportedVersion): break
        case (10..<26, .damaged): break  // the vault id must be this vault's
        case (26, .damaged): break  // store id byte
        case (27..<87, .tampered): break  // the wrapped device-only key
        case (87..<95, .tampered): break  // the generation is in the store's AAD
        case (95..<100, .damaged): break  // store id and length
        case (100..., .tampered), (100..., .damaged): break
        default: Issue.record("device-only byte \(index): unexpected \(error)")
        }
      }
    }
  }
}
