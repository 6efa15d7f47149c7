import Foundation
import Glibc
import TaskCrypto
import TaskSystem
import Testing

@testable import AssistantKeys

/// Someone who can write a version-1 registry file (one MAC over the
/// whole file, still read after an upgrade) but does not hold the vault's
/// integrity key: every edit must make the registry fail closed. Version
/// 2's rejections are in `RegistryV2Tests`.
@Suite struct RegistryTamperTests {
  /// A registry with a restricted key, a revoked key and a good key.
  struct Scene {
    let fixture: RegistryFixture
    let restricted: MintedAssistantKey
    let revoked: MintedAssistantKey
    let text: String
  }

  func scene() throws -> Scene {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let restricted = try registry.mint(name: "reader", trust: .restricted, grants: ["notes:read"])
    let revoked = try registry.mint(name: "old")
    try registry.revoke(revoked.key.id)
    try fixture.downgradeToVersion1()
    return Scene(fixture: fixture, restricted: restricted, revoked: revoked, text: try fixture.registryText())
  }

  /// Every key, including the untouched ones, is refused with `registryDamaged`.
  func expectFailsClosed(_ scene: Scene, _ expected: AssistantKeyError.RegistryDamage = .authenticationFailed) {
    #expect(assistantError { _ = try scene.fixture.open() } == .registryDamaged(expected))
    #expect(assistantError { _ = try scene.fixture.open().keys() } == .registryDamaged(expected))
  }

  /// Replaces `original` (which must be there) by `replacement` in the
  /// registry text, writes it back and expects every key to fail closed.
  func expectEditFailsClosed(_ scene: Scene, replacing original: String, with replacement: String) throws {
    let edited = scene.text.replacingOccurrences(of: original, with: replacement)
    #expect(edited != scene.text)
    try scene.fixture.overwriteRegistry(edited)
    expectFailsClosed(scene)
  }

  @Test func addedDigestLineFailsClosed() throws {
    let scene = try scene()
    let forged = try AssistantKey.generate()
    let line = "key \(forged.id) \(forged.digest.hex) 1800000000 - - elevated evil -\n"
    try scene.fixture.overwriteRegistry(scene.text.replacingOccurrences(of: "\nmac ", with: "\n\(line)mac "))
    expectFailsClosed(scene)
  }

  @Test func removedRevocationFailsClosed() throws {
    let scene = try scene()
    try expectEditFailsClosed(scene, replacing: "revoked:1800000000", with: "-")
    #expect(assistantError { _ = try scene.fixture.open().verify(scene.revoked.key.testString) } != nil)
  }

  @Test func raisedTrustLevelFailsClosed() throws {
    try expectEditFailsClosed(try scene(), replacing: " restricted reader ", with: " elevated reader ")
  }

  @Test func addedGrantFailsClosed() throws {
    let scene = try scene()
    try scene.fixture.overwriteRegistry(
      scene.text.replacingOccurrences(of: "notes:read", with: "notes:read,vault:read"))
    expectFailsClosed(scene)
  }

  @Test func editWithAMacUnderAnotherKeyFailsClosed() throws {
    let scene = try scene()
    let body = scene.text[..<scene.text.range(of: "mac ")!.lowerBound]
      .replacingOccurrences(of: "revoked:1800000000", with: "-")
    let attackerKey = try SymmetricKey.generate()
    let mac = HMACSHA256.authenticationCode(for: Array(body.utf8), using: attackerKey)
    try scene.fixture.overwriteRegistry(body + "mac \(Base64.encode(mac))\n")
    expectFailsClosed(scene)
  }

  @Test func registryOpenedWithTheWrongIntegrityKeyFailsClosed() throws {
    let scene = try scene()
    #expect(
      assistantError { _ = try scene.fixture.open(key: try SymmetricKey.generate()) }
        == .registryDamaged(.authenticationFailed))
  }

  @Test func everySingleByteFlipFailsClosed() throws {
    let scene = try scene()
    let bytes = Array(scene.text.utf8)
    for index in bytes.indices {
      var changed = bytes
      changed[index] ^= 0x01
      try scene.fixture.overwriteRegistry(changed)
      let error = assistantError { _ = try scene.fixture.open() }
      guard case .registryDamaged? = error else {
        Issue.record("flip at byte \(index) gave \(String(describing: error))")
        return
      }
    }
  }

  @Test func twoThousandRandomEditsAllFailClosedWithoutACrash() throws {
    let scene = try scene()
    let bytes = Array(scene.text.utf8)
    var generator = SystemRandomNumberGenerator()
    for round in 0..<2_000 {
      var edited = bytes
      for _ in 0...Int.random(in: 0..<3, using: &generator) {
        let index = Int.random(in: 0..<edited.count, using: &generator)
        switch Int.random(in: 0..<3, using: &generator) {
        case 0: edited[index] = UInt8.random(in: 0...255, using: &generator)
        case 1: edited.remove(at: index)
        default: edited.insert(UInt8.random(in: 0...255, using: &generator), at: index)
        }
      }
      guard edited != bytes else { continue }
      try scene.fixture.overwriteRegistry(edited)
      guard case .registryDamaged? = assistantError({ _ = try scene.fixture.open() }) else {
        Issue.record("round \(round): an edited registry was accepted")
        return
      }
    }
  }

  @Test func truncationAndTrailingBytesFailClosed() throws {
    let scene = try scene()
    let bytes = Array(scene.text.utf8)
    for length in [0, 10, bytes.count / 2, bytes.count - 50, bytes.count - 1] {
      try scene.fixture.overwriteRegistry(Array(bytes[..<length]))
      let error = assistantError { _ = try scene.fixture.open() }
      guard case .registryDamaged? = error else {
        Issue.record("truncation to \(length) gave \(String(describing: error))")
        continue
      }
    }
    try scene.fixture.overwriteRegistry(bytes + Array("\n".utf8))
    guard case .registryDamaged? = assistantError({ _ = try scene.fixture.open() }) else {
      Issue.record("trailing newline accepted")
      return
    }
  }

  @Test func unknownVersionIsRefusedAsUnsupported() throws {
    let scene = try scene()
    try scene.fixture.overwriteRegistry(scene.text.replacingOccurrences(of: "registry v1\n", with: "registry v3\n"))
    expectFailsClosed(scene, .unsupportedVersion("v3"))
  }

  @Test func emptyFileIsRefused() throws {
    let scene = try scene()
    try scene.fixture.overwriteRegistry([UInt8]())
    expectFailsClosed(scene, .malformed(line: 1, reason: "unexpected header"))
  }

  @Test func registryFileAboveSixteenMebibytesIsRefusedBeforeItIsRead() throws {
    let scene = try scene()
    let limit = 16 << 20
    try scene.fixture.overwriteRegistry([UInt8](repeating: 0x20, count: limit + 1))
    expectFailsClosed(scene, .tooLarge(byteCount: limit + 1, limit: limit))
  }

  @Test func looseModeSymlinkAndForeignDirectoryAreRefused() throws {
    let scene = try scene()
    let path = scene.fixture.registryPath
    chmod(path, 0o644)
    #expect(
      assistantError { _ = try scene.fixture.open() }
        == .registryDamaged(.unreadable(.loosePermissions(path: path, mode: 0o644, fix: "chmod 600 '\(path)'"))))
    chmod(path, 0o600)
    let real = path + ".real"
    rename(path, real)
    symlink(real, path)
    #expect(
      assistantError { _ = try scene.fixture.open() }
        == .registryDamaged(.unreadable(.wrongFileType(path: path, expected: "a regular file (it is a symlink)"))))
    unlink(path)
    rename(real, path)
    chmod(scene.fixture.directory, 0o755)
    guard case .registryDamaged(.unreadable)? = assistantError({ _ = try scene.fixture.open() }) else {
      Issue.record("loose directory accepted")
      return
    }
    chmod(scene.fixture.directory, 0o700)
    #expect(try scene.fixture.open().verify(scene.restricted.key.testString).name == "reader")
  }

  /// A documented limit (SECURITY.md §9.13, "What is not protected"): a
  /// whole older registry, authentic under the same key, is accepted. This
  /// test pins the behaviour so that a fix shows up here.
  @Test func rollbackToAnOlderAuthenticRegistryIsNotDetected() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "agent")
    let before = try fixture.registryBytes()
    try registry.revoke(minted.key.id)
    try fixture.overwriteRegistry(before)
    #expect(try fixture.open().verify(minted.key.testString).name == "agent")
  }
}
