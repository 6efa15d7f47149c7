import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import Testing

@testable import TaskVault

/// The unlock session's file edge cases (docs/formats/unlock-session.md):
/// a session file of another length, and a passphrase change on a disk
/// that cannot take a new file.
@Suite("Unlock session files")
struct SessionFileTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  /// Every file of the vault directory and the runtime directory, with its
  /// bytes and inode: what "every file as it was" compares.
  func snapshot() throws -> [String: [UInt8]] {
    var files = [String: [UInt8]]()
    for root in [machine.vaultDirectory, machine.runtime.url.path] {
      let walker = FileManager.default.enumerator(atPath: root)
      while let name = walker?.nextObject() as? String {
        let path = root + "/" + name
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        files[path] = bytes + withUnsafeBytes(of: info.st_ino) { Array($0) }
      }
    }
    return files
  }

  /// Step 2: a session file that is not 182 bytes is "not unlocked",
  /// longer ones too (issue 22, item 12: a longer one made every command
  /// report the vault as damaged, exit 15).
  @Test func aSessionFileLongerThanASessionIsLockedNotDamaged() throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    let path = machine.vaultDirectory + "/device-only/unlock.session"
    let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    #expect(good.count == 182)
    for extra in [1, 4096 - 182, 1 << 20] {
      try Data(good + [UInt8](repeating: 0, count: extra)).write(to: URL(fileURLWithPath: path))
      #expect(try vault.status().lockState == .locked(.notUnlocked), "\(extra) bytes more")
      #expect(throws: TaskVaultError.locked(reason: .notUnlocked)) { try machine.open().items() }
    }
    try vault.lock()
    #expect(!FileManager.default.fileExists(atPath: path))
  }

  /// With no inode (or no block) left in the vault's file system, a
  /// passphrase change fails (74) and changes no file: not the vault file,
  /// not the session file, not the session key (issue 22: it ended the
  /// session and then wrote a new one over the old header).
  @Test(arguments: [ENOSPC, EDQUOT])
  func aPassphraseChangeOnAFullDiskLeavesEveryFileAsItWas(code: Int32) throws {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    let before = try snapshot()
    machine.fileSystem.failOn = .createExclusive
    machine.fileSystem.code = code
    machine.fileSystem.persistent = true
    machine.fileSystem.under = machine.vaultDirectory
    #expect(
      throws: TaskVaultError.system(.failed(call: "open", path: machine.vaultDirectory + "/vault.tkv.tmp", errno: code))
    ) {
      try vault.changePassphrase(from: secret("correct horse"), to: secret("battery staple"))
    }
    #expect(try snapshot() == before)
    machine.fileSystem.failOn = nil
    #expect(try machine.open().status().lockState == .unlocked(until: nil))
    try vault.changePassphrase(from: secret("correct horse"), to: secret("battery staple"))
    #expect(try machine.open().status().lockState == .unlocked(until: nil))
  }
}
