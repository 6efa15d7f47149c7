import Foundation
import Glibc
import TaskCrypto
import TaskSystem
import Testing

@testable import AssistantKeys

/// A failure at each step of a durable write leaves a registry that is
/// either the old one or the new one, never a mix, and never a key that
/// was handed out without being registered.
@Suite struct RegistryFaultTests {
  @Test(arguments: [FileStep.createExclusive, .write, .fsync, .close, .rename])
  func failureBeforeTheRenameLeavesTheOldRegistry(step: FileStep) throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let kept = try registry.mint(name: "kept")
    let before = try fixture.registryBytes()
    fixture.fault = { failing, path in failing == step && path.contains(".registry") ? EIO : nil }
    let error = assistantError { _ = try registry.mint(name: "new") }
    guard case .system(.failed(let call, _, let code))? = error else {
      Issue.record("mint gave \(String(describing: error))")
      return
    }
    #expect(call == step.rawValue)
    #expect(code == EIO)
    guard case .system(.failed(step.rawValue, _, EIO))? = assistantError({ try registry.revoke(kept.key.id) }) else {
      Issue.record("revoke did not fail at \(step)")
      return
    }
    fixture.fault = nil
    #expect(try fixture.registryBytes() == before)
    #expect(try fixture.open().verify(kept.key.testString).name == "kept")
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: fixture.directory).filter {
      $0.hasSuffix(".tmp")
    }
    #expect(leftovers.isEmpty)
  }

  @Test func failedDirectorySyncReportsButTheRevocationHasTakenEffect() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "agent")
    fixture.fault = { step, _ in step == .fsyncDirectory ? EIO : nil }
    #expect(
      assistantError { try registry.revoke(minted.key.id) }
        == .system(.failed(call: FileStep.fsyncDirectory.rawValue, path: fixture.directory, errno: EIO)))
    fixture.fault = nil
    #expect(assistantError { _ = try fixture.open().verify(minted.key.testString) } == .revoked(minted.key.id))
    // Retrying is safe: revoking a revoked key succeeds.
    #expect(try registry.revoke(minted.key.id).status.word == "revoked")
  }

  @Test func failedLastUsedWriteDoesNotFailTheVerify() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "agent")
    fixture.fault = { _, path in path.hasSuffix("last-used") ? ENOSPC : nil }
    #expect(try registry.verify(minted.key.testString).name == "agent")
  }

  @Test func unreadableRegistryDuringVerifyIsRegistryDamaged() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "agent")
    // Replace the file with a directory: open succeeds on neither path.
    let path = fixture.registryPath
    unlink(path)
    mkdir(path, 0o700)
    let error = assistantError { _ = try registry.verify(minted.key.testString) }
    guard case .registryDamaged? = error else {
      Issue.record("verify gave \(String(describing: error))")
      return
    }
  }
}
