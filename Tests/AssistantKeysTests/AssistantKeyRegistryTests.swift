import Foundation
import TaskCrypto
import TaskSystem
import Testing

@testable import AssistantKeys

@Suite struct AssistantKeyRegistryTests {
  @Test func mintThenVerifyReturnsTheIdentity() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(
      name: "claude-desktop", trust: .elevated, grants: ["notes:write", "notes:read", "notes:read"])
    let identity = try registry.verify(minted.key.testString)
    #expect(identity.id == minted.key.id)
    #expect(identity.name == "claude-desktop")
    #expect(identity.trust == .elevated)
    #expect(identity.grants == ["notes:read", "notes:write"])
    #expect(identity.expires == nil)
    #expect(minted.record.status == .active)
    // The bytes overload and another process agree.
    #expect(try fixture.open().verify(minted.key.withUnsafeBytes { [UInt8]($0) }) == identity)
  }

  @Test func registryStoresOnlyTheDigestNeverTheKey() throws {
    let fixture = try RegistryFixture()
    let minted = try fixture.open().mint(name: "a")
    let text = try fixture.registryText()
    #expect(!text.contains(minted.key.testString))
    #expect(!text.contains(String(minted.key.testString.dropFirst(3).prefix(20))))
    #expect(text.contains(minted.key.digest.hex))
  }

  @Test func revokedKeyIsRefusedAtTheNextVerifyInAnotherInstance() throws {
    let fixture = try RegistryFixture()
    let server = try fixture.open()
    let minted = try server.mint(name: "agent")
    #expect(try server.verify(minted.key.testString).name == "agent")
    // Another process revokes; the long-running one sees it on its next verify.
    let record = try fixture.open().revoke(minted.key.id)
    #expect(record.status == .revoked(at: fixture.clock.now))
    #expect(assistantError { _ = try server.verify(minted.key.testString) } == .revoked(minted.key.id))
  }

  @Test func revokedKeyStaysRevokedAfterReopeningAndAfterTheRegistryIsRewritten() throws {
    let fixture = try RegistryFixture()
    let minted = try fixture.open().mint(name: "agent")
    try fixture.open().revoke(minted.key.id)
    // A fresh instance (a new process, or after a reboot).
    let reopened = try fixture.open()
    #expect(assistantError { _ = try reopened.verify(minted.key.testString) } == .revoked(minted.key.id))
    // Rewrites by later changes carry the revocation forward.
    let other = try reopened.mint(name: "other")
    try reopened.revoke(other.key.id)
    _ = try reopened.mint(name: "third")
    _ = try reopened.rotate(assistant: "third")
    #expect(assistantError { _ = try fixture.open().verify(minted.key.testString) } == .revoked(minted.key.id))
    // Revoking again changes nothing and keeps the first revocation time.
    let revokedAt = fixture.clock.now
    fixture.clock.advance(seconds: 100)
    #expect(try reopened.revoke(minted.key.id).status == .revoked(at: revokedAt))
    // No operation brings it back: minting the same name makes a new key.
    let again = try reopened.mint(name: "agent")
    #expect(again.key.id != minted.key.id)
    #expect(assistantError { _ = try reopened.verify(minted.key.testString) } == .revoked(minted.key.id))
  }

  @Test func rotateWithoutOverlapRevokesTheOldKeyAtOnce() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let old = try registry.mint(name: "agent", trust: .restricted, grants: ["notes:read"])
    let new = try registry.rotate(assistant: "agent")
    #expect(assistantError { _ = try registry.verify(old.key.testString) } == .revoked(old.key.id))
    let identity = try registry.verify(new.key.testString)
    #expect(identity.trust == .restricted)
    #expect(identity.grants == ["notes:read"])
    #expect(new.key.id != old.key.id)
  }

  @Test func rotateWithOverlapKeepsBothUntilTheWindowEndsThenRevokesForGood() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let old = try registry.mint(name: "agent")
    let new = try registry.rotate(assistant: "agent", overlap: .seconds(3_600))
    let oldIdentity = try registry.verify(old.key.testString)
    #expect(oldIdentity.expires == fixture.clock.now + 3_600)
    #expect(try registry.verify(new.key.testString).name == "agent")
    #expect(try registry.keys().first { $0.id == old.key.id }?.status == .overlapping(until: fixture.clock.now + 3_600))
    fixture.clock.advance(seconds: 3_600)
    #expect(assistantError { _ = try registry.verify(old.key.testString) } == .revoked(old.key.id))
    // Enforced at verify time and persisted: setting the clock back does not revive it.
    #expect(try fixture.registryText().contains("revoked:\(Int64(fixture.clock.now.timeIntervalSince1970))"))
    fixture.clock.advance(seconds: -7_200)
    #expect(assistantError { _ = try fixture.open().verify(old.key.testString) } == .revoked(old.key.id))
    #expect(try fixture.open().verify(new.key.testString).id == new.key.id)
  }

  @Test func rotateKeepsTheOldLifetimeUnlessGivenOne() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    _ = try registry.mint(name: "agent", expiresAfter: .seconds(86_400))
    fixture.clock.advance(seconds: 100)
    let kept = try registry.rotate(assistant: "agent")
    #expect(kept.record.expires == fixture.clock.now + 86_400)
    let given = try registry.rotate(assistant: "agent", expiresAfter: .seconds(60))
    #expect(given.record.expires == fixture.clock.now + 60)
  }

  @Test func expiredKeyIsRefusedAsExpired() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "agent", expiresAfter: .seconds(60))
    fixture.clock.advance(seconds: 59)
    #expect(try registry.verify(minted.key.testString).expires == minted.record.expires)
    fixture.clock.advance(seconds: 1)
    #expect(assistantError { _ = try registry.verify(minted.key.testString) } == .expired(minted.key.id))
    #expect(try registry.keys().first?.status == .expired(at: fixture.clock.now))
    // An expired name may be minted again.
    #expect(try registry.mint(name: "agent").record.status == .active)
  }

  @Test func everyVerifyErrorPathThrowsItsOwnCase() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let good = try registry.mint(name: "good")
    let revoked = try registry.mint(name: "revoked")
    try registry.revoke(revoked.key.id)
    let expiring = try registry.mint(name: "expiring", expiresAfter: .seconds(10))
    fixture.clock.advance(seconds: 10)
    let unknown = try AssistantKey.generate()
    var typo = Array(good.key.testString.utf8)
    typo[20] = typo[20] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")

    var seen = [String: AssistantKeyError]()
    func record(_ label: String, _ body: () throws -> Void) {
      if let error = assistantError(body) { seen[label] = error }
    }
    record("malformed") { _ = try registry.verify("tk_short") }
    record("bad checksum") { _ = try registry.verify(typo) }
    record("unknown") { _ = try registry.verify(unknown.testString) }
    record("revoked") { _ = try registry.verify(revoked.key.testString) }
    record("expired") { _ = try registry.verify(expiring.key.testString) }
    record("locked") { _ = try AssistantKeyRegistry(directory: fixture.directory, integrityKey: nil) }
    // An edited record refuses its own key (the header and the other
    // records are intact, so verify reads no further).
    try fixture.editRegistry(replacing: "expiring", with: "expirinG")
    record("damaged") { _ = try fixture.open().verify(expiring.key.testString) }
    #expect(seen["malformed"] == .malformedKey(.wrongLength(8)))
    #expect(seen["bad checksum"] == .badChecksum)
    #expect(seen["unknown"] == .unknownKey)
    #expect(seen["revoked"] == .revoked(revoked.key.id))
    #expect(seen["expired"] == .expired(expiring.key.id))
    #expect(seen["locked"] == .vaultLocked)
    #expect(seen["damaged"] == .registryDamaged(.authenticationFailed))
    #expect(seen.count == 7)
    // And the good key still verifies, in this instance and a new one;
    // a full read (list) refuses the whole file.
    #expect(try registry.verify(good.key.testString).name == "good")
    #expect(try fixture.open().verify(good.key.testString).name == "good")
    #expect(assistantError { _ = try fixture.open().keys() } == .registryDamaged(.authenticationFailed))
  }

  @Test func verifyThrowsNothingButAssistantKeyErrorByItsType() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    do {
      _ = try registry.verify("tk_")
      Issue.record("a malformed key verified")
    } catch {
      // Typed throws: `error` is statically an AssistantKeyError, so no
      // other error type can escape verify.
      let typed: AssistantKeyError = error
      #expect(typed == .malformedKey(.wrongLength(3)))
    }
  }

  @Test func missingRegistryMeansEveryKeyIsUnknown() throws {
    let fixture = try RegistryFixture()
    let key = try AssistantKey.generate()
    #expect(assistantError { _ = try fixture.open().verify(key.testString) } == .unknownKey)
    #expect(try fixture.open().keys().isEmpty)
  }

  @Test func mintAndRotateRefuseBadInput() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    #expect(assistantError { _ = try registry.mint(name: "") } == .invalidName(""))
    #expect(assistantError { _ = try registry.mint(name: "has space") } == .invalidName("has space"))
    #expect(assistantError { _ = try registry.mint(name: "-dash") } == .invalidName("-dash"))
    #expect(assistantError { _ = try registry.mint(name: String(repeating: "a", count: 65)) } != nil)
    #expect(assistantError { _ = try registry.mint(name: "a", grants: ["Notes"]) } == .invalidGrant("Notes"))
    #expect(assistantError { _ = try registry.mint(name: "a", grants: ["a,b"]) } == .invalidGrant("a,b"))
    let many = (0..<17).map { "g\($0)" }
    #expect(assistantError { _ = try registry.mint(name: "a", grants: many) } == .tooManyGrants(count: 17, limit: 16))
    #expect(
      assistantError { _ = try registry.mint(name: "a", expiresAfter: .seconds(0)) }
        == .invalidDuration(seconds: 0, limit: AssistantKeyRegistry.maximumLifetime))
    #expect(
      assistantError { _ = try registry.mint(name: "a", expiresAfter: .seconds(3_650 * 86_400 + 1)) }
        == .invalidDuration(seconds: 3_650 * 86_400 + 1, limit: AssistantKeyRegistry.maximumLifetime))
    _ = try registry.mint(name: "a")
    #expect(assistantError { _ = try registry.mint(name: "a") } == .nameInUse("a"))
    #expect(assistantError { _ = try registry.rotate(assistant: "nobody") } == .noSuchAssistant("nobody"))
    #expect(
      assistantError { _ = try registry.rotate(assistant: "a", overlap: .seconds(30 * 86_400 + 1)) }
        == .invalidDuration(seconds: 30 * 86_400 + 1, limit: AssistantKeyRegistry.maximumOverlap))
    let stranger = AssistantKeyID("tkid_0000000000000000")!
    #expect(assistantError { try registry.revoke(stranger) } == .unknownID(stranger))
    // None of the refusals wrote anything but the one good mint.
    #expect(try registry.keys().count == 1)
  }

  @Test func listShowsEveryKeyWithStatusAndNeverTheKey() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let a = try registry.mint(name: "a")
    fixture.clock.advance(seconds: 1)
    let b = try registry.mint(name: "b", trust: .restricted)
    try registry.revoke(b.key.id)
    let records = try registry.keys()
    #expect(records.map(\.id) == [a.key.id, b.key.id])
    #expect(records.map(\.status.word) == ["active", "revoked"])
    #expect(!"\(records)".contains(a.key.testString))
  }

  @Test func lastUsedIsRecordedAtMostOncePerMinutePerKey() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    let start = fixture.clock.now
    // A use rewrites the key's slot in place: count the changes.
    var writes = 0
    var last = try Data(contentsOf: URL(fileURLWithPath: fixture.lastUsedPath))
    func countChange() throws {
      let now = try Data(contentsOf: URL(fileURLWithPath: fixture.lastUsedPath))
      if now != last { writes += 1 }
      last = now
    }
    for _ in 0..<100 {
      _ = try registry.verify(minted.key.testString)
      try countChange()
      fixture.clock.advance(seconds: 1)
    }
    // 100 verifies over 100 seconds: written at 0 s and at 60 s only.
    #expect(writes == 2)
    #expect(try registry.keys().first?.lastUsed == start + 60)
    // Another process that verifies within the minute does not write either.
    fixture.clock.advance(seconds: -39)
    _ = try fixture.open().verify(minted.key.testString)
    try countChange()
    #expect(writes == 2)
  }

  @Test func damagedLastUsedFileNeverChangesAVerify() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    _ = try registry.verify(minted.key.testString)
    try Data("garbage".utf8).write(to: URL(fileURLWithPath: fixture.lastUsedPath))
    #expect(try fixture.open().verify(minted.key.testString).name == "a")
    // A verify records nothing in a file it cannot read (issue 22): the file
    // stays, the key reads as never used until the next registry write.
    #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.lastUsedPath)) == Data("garbage".utf8))
    #expect(try fixture.open().keys().first?.lastUsed == nil)
    _ = try registry.mint(name: "b")
    fixture.clock.advance(seconds: 61)
    #expect(try fixture.open().verify(minted.key.testString).name == "a")
    #expect(try fixture.open().keys().first { $0.id == minted.key.id }?.lastUsed == fixture.clock.now)
  }

  @Test func verifyIsADictionaryLookupThatDoesNotRereadAnUnchangedRegistry() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "real")
    try registry.addRandomEntriesForTesting(count: 5_000)
    let small = try fixture.open()
    let loadsBefore = registry.loadCount
    for _ in 0..<200 { _ = try registry.verify(minted.key.testString) }
    // No file read per verify: one lstat and one dictionary lookup.
    #expect(registry.loadCount == loadsBefore)
    // The same holds whatever the size: a fresh instance loads once.
    for _ in 0..<200 { _ = try small.verify(minted.key.testString) }
    #expect(small.loadCount == 1)
  }

  /// The limit where mint and rotate check it (`append`), at its real
  /// value, on contents in memory: a registry of 10^6 keys takes a minute
  /// to write in a debug build. The reader's side (a header counting
  /// 1,000,001 keys) is in `RegistryV2Tests.headerRejectionsInTheirOrder`.
  @Test func registryRefusesTheKeyAfterItsLimit() throws {
    #expect(AssistantKeyRegistry.maximumKeyCount == 1_000_000)
    let filler = SHA256.hash(data: Array("filler".utf8))
    let entry = RegistryEntry(
      id: AssistantKeyID(digest: filler), digest: filler, created: 0, expires: nil, revocation: .revoked(0),
      trust: .restricted, name: "filler", grants: [])
    let key = try AssistantKey.generate()
    let added = RegistryEntry(
      id: key.id, digest: key.digest, created: 0, expires: nil, revocation: .none, trust: .standard, name: "new",
      grants: [])
    var contents = RegistryFormat.Contents(
      generation: 1, entries: Array(repeating: entry, count: AssistantKeyRegistry.maximumKeyCount - 1))
    try AssistantKeyRegistry.append(added, to: &contents)
    #expect(contents.entries.count == AssistantKeyRegistry.maximumKeyCount)
    #expect(
      assistantError { try AssistantKeyRegistry.append(added, to: &contents) }
        == .registryFull(limit: AssistantKeyRegistry.maximumKeyCount))
  }

  @Test func filesAreCreatedOwnerOnly() throws {
    let fixture = try RegistryFixture()
    let registry = try fixture.open()
    let minted = try registry.mint(name: "a")
    _ = try registry.verify(minted.key.testString)
    let manager = FileManager.default
    func mode(_ path: String) throws -> Int {
      (try manager.attributesOfItem(atPath: path)[.posixPermissions] as! NSNumber).intValue
    }
    #expect(try mode(fixture.directory) == 0o700)
    #expect(try mode(fixture.registryPath) == 0o600)
    #expect(try mode(fixture.lastUsedPath) == 0o600)
    #expect(try mode(fixture.directory + "/assistant-keys.lock") == 0o600)
    let leftovers = try manager.contentsOfDirectory(atPath: fixture.directory).filter { $0.hasSuffix(".tmp") }
    #expect(leftovers.isEmpty)
  }
}
