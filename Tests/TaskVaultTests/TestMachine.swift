import Foundation
import Glibc
import TaskCrypto
import TaskKeyTestSupport

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
      fileSystem: fileSystem,
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
/// after `skip` earlier calls of that step.
final class FaultyFileSystem: FileSystem, @unchecked Sendable {
  enum Step: String, CaseIterable, Sendable {
    case createExclusive, write, fsync, close, rename, link, unlink, fsyncDirectory
  }

  var failOn: Step?
  var skip = 0
  private let real = PosixFileSystem()

  private func check(_ step: Step, _ path: String) throws {
    guard step == failOn else { return }
    if skip > 0 {
      skip -= 1
      return
    }
    failOn = nil
    throw TaskVaultError.io(path: path, call: step.rawValue, errno: EIO)
  }

  func createExclusive(_ path: String) throws -> Int32 {
    try check(.createExclusive, path)
    return try real.createExclusive(path)
  }

  func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
    try check(.write, path)
    try real.write(fd, bytes, path: path)
  }

  func fsync(_ fd: Int32, path: String) throws {
    try check(.fsync, path)
    try real.fsync(fd, path: path)
  }

  func close(_ fd: Int32, path: String) throws {
    do { try check(.close, path) } catch {
      try? real.close(fd, path: path)
      throw error
    }
    try real.close(fd, path: path)
  }

  func rename(_ from: String, _ to: String) throws {
    try check(.rename, to)
    try real.rename(from, to)
  }

  func link(_ from: String, _ to: String) throws {
    try check(.link, to)
    try real.link(from, to)
  }

  func unlink(_ path: String) throws {
    try check(.unlink, path)
    try real.unlink(path)
  }

  func fsyncDirectory(_ path: String) throws {
    try check(.fsyncDirectory, path)
    try real.fsyncDirectory(path)
  }
}
