import Foundation
import TaskCrypto
import TaskKeyTestSupport
import Testing

@testable import TaskVault

@Suite("Vault revision: a cheap stamp that changes with every write of the note keyring")
struct VaultRevisionTests {
  let machine: TestMachine

  init() throws {
    machine = try TestMachine()
  }

  func unlocked() throws -> Vault {
    let vault = try machine.create()
    try vault.unlock(passphrase: secret("correct horse"))
    return vault
  }

  @Test func theRevisionIsStableAcrossReadsAndNeedsNoUnlock() throws {
    let vault = try unlocked()
    let first = try vault.revision()
    #expect(try machine.open().revision() == first)
    try vault.lock()
    #expect(try vault.revision() == first, "read from the file alone, without the session's keys")
    try vault.unlock(passphrase: secret("correct horse"))
    #expect(try vault.revision() == first, "lock and unlock do not write vault.tkv")
  }

  @Test func theKeyringComesWithTheRevisionOfTheFileItWasReadFrom() throws {
    let vault = try unlocked()
    let (keyring, revision) = try vault.noteKeyringWithRevision()
    #expect(keyring == (try vault.noteKeyring()))
    #expect(revision == (try vault.revision()))
  }

  @Test func everyChangeOfTheKeyringChangesTheRevision() throws {
    let vault = try unlocked()
    var seen = [try vault.revision()]
    try vault.updateNoteKeyring { _ = try $0.rotate() }
    seen.append(try vault.revision())
    let old = try vault.noteKeyring().ids[0]
    try vault.updateNoteKeyring { try $0.retire(old) }
    seen.append(try vault.revision())
    #expect(Set(seen).count == 3)
    #expect(seen.map(\.generation) == seen.map(\.generation).sorted())
    let (keyring, revision) = try vault.noteKeyringWithRevision()
    #expect(revision == seen[2])
    #expect(keyring.ids.count == 1)
  }

  @Test func anotherWriteOfTheFileChangesTheRevisionButNotTheKeyring() throws {
    let vault = try unlocked()
    let before = try vault.noteKeyringWithRevision()
    try vault.setItem(secret("token"), named: "calendar/token", class: .afterFirstUnlock)
    let after = try vault.noteKeyringWithRevision()
    #expect(after.revision != before.revision)
    #expect(after.keyring.primaryID == before.keyring.primaryID)
  }

  @Test func theRevisionNamesTheFileNotJustItsGeneration() throws {
    let vault = try unlocked()
    let original = try machine.vaultBytes()
    let revision = try vault.revision()
    try vault.updateNoteKeyring { _ = try $0.rotate() }
    try machine.writeVault(original)
    #expect(try vault.revision() == revision, "the same bytes are the same revision")
    // A passphrase change keeps the generation and rewrites the header.
    try vault.changePassphrase(from: secret("correct horse"), to: secret("another horse"))
    let changed = try vault.revision()
    #expect(changed.generation == revision.generation)
    #expect(changed != revision)
  }

  @Test func aMissingOrDamagedFileIsAnErrorNeverARevision() throws {
    let vault = try unlocked()
    var bytes = try machine.vaultBytes()
    bytes[bytes.count - 1] ^= 1
    try machine.writeVault(bytes)
    #expect(throws: TaskVaultError.self) { try vault.revision() }
    try FileManager.default.removeItem(atPath: machine.vaultDirectory + "/vault.tkv")
    #expect(throws: TaskVaultError.notInitialised(path: machine.vaultDirectory + "/vault.tkv")) {
      try vault.revision()
    }
  }
}
