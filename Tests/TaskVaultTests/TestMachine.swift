import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem
import TaskSystemTesting

@testable import TaskVault

/// A simulated machine: boot id, clock and tmpfs runtime directory that a
/// test can change, and a file system that fails on request.
final class TestMachine: @unchecked Sendable {
  var bootID = [UInt8](repeating: 0x11, count: 16)
  var now: Int64 = 1_800_000_000
  let home: TemporaryDirectory
  let runtime: TemporaryDirectory
  let fileSystem = FaultyFileSystem()

  init() throws {
    home = try TemporaryDirectory()
    runtime = try TemporaryDirectory()
  }

  var vaultDirectory: String { home.path("keys") }

  var environment: VaultEnvironment {
    VaultEnvironment(
      fileSystem: fileSystem.seam,
      bootID: { [unowned self] in self.bootID },
      now: { [unowned self] in self.now },
      runtimeDirectory: { [unowned self] in self.runtime.url.path },
      random: { SecureRandom.fill($0) })
  }

  /// A restart: a new boot id, and the tmpfs runtime directory emptied.
  func reboot() throws {
    bootID = SecureRandom.bytes(count: 16)
    for name in try FileManager.default.contentsOfDirectory(atPath: runtime.url.path) {
      try FileManager.default.removeItem(atPath: runtime.path(name))
    }
  }

  func create(_ passphrase: String = "correct horse", at directory: String? = nil) throws -> Vault {
    try Vault.create(
      at: directory ?? vaultDirectory, passphrase: secret(passphrase), preset: .fastTestOnly, environment: environment)
  }

  func open(_ directory: String? = nil) throws -> Vault {
    try Vault(at: directory ?? vaultDirectory, environment: environment)
  }

  func vaultBytes(_ directory: String? = nil) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: (directory ?? vaultDirectory) + "/vault.tkv")))
  }

  func writeVault(_ bytes: [UInt8], _ directory: String? = nil) throws {
    let path = (directory ?? vaultDirectory) + "/vault.tkv"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o600)
  }
}

/// The real file system, except that the `failOn` step fails once with EIO
/// after `skip` earlier calls of that step (through TaskSystem's seam); or,
/// with `persistent`, fails every time with `code` for paths under `under`
/// (a full disk, or one without inodes).
final class FaultyFileSystem: @unchecked Sendable {
  var failOn: FileStep?
  var skip = 0
  var code = EIO
  var persistent = false
  var under: String?
  private(set) lazy var seam = FaultInjectingFileSystem { [unowned self] step, path in
    guard step == self.failOn, self.under.map({ path.hasPrefix($0 + "/") }) ?? true else { return nil }
    if self.skip > 0 {
      self.skip -= 1
      return nil
    }
    if !self.persistent { self.failOn = nil }
    return self.code
  }
}
