import AssistantKeys
import Foundation
import TaskVault
import TaskerGate
import TaskerTestSupport
import XCTest

/// The authenticator remembers "unlocked" and confirms it through a
/// `DirectoryWatch` of the unlock state's directories: every lock and
/// unlock must still be seen by the very next check, with no wait, and an
/// unrelated change in a watched directory must not lock anyone out.
final class GateAuthenticatorLockTests: XCTestCase {
  private var device: TestDevice!
  private var vault: Vault!
  private var key = ""

  override func setUpWithError() throws {
    device = try TestDevice()
    vault = try device.vault()
    key = try AssistantKeyRegistry(vault: vault).mint(name: "watcher").key.withUnsafeBytes {
      String(decoding: $0, as: UTF8.self)
    }
  }

  private func isAdmitted(_ authenticator: GateAuthenticator) -> Bool {
    switch authenticator.verify(key) {
    case .success(let identity):
      XCTAssertEqual(identity.name, "watcher")
      return true
    case .failure(let error):
      XCTAssertEqual(error, .vaultLocked)
      return false
    }
  }

  func testEachLockAndUnlockIsSeenByTheNextCheck() throws {
    let authenticator = GateAuthenticator(vaultDirectory: device.vaultDirectory)
    for round in 0..<5 {
      // Several checks while unlocked: the later ones are answered by the watch.
      for _ in 0..<3 { XCTAssertTrue(isAdmitted(authenticator), "round \(round): unlocked") }
      try vault.lock()
      XCTAssertFalse(isAdmitted(authenticator), "round \(round): the first check after the lock refuses")
      XCTAssertFalse(isAdmitted(authenticator), "round \(round): and so does every later one")
      try vault.unlock(passphrase: try device.secret())
      XCTAssertTrue(isAdmitted(authenticator), "round \(round): the first check after the unlock admits")
    }
  }

  func testALockInAnotherProcessIsSeenByTheNextCheck() throws {
    let authenticator = GateAuthenticator(vaultDirectory: device.vaultDirectory)
    for _ in 0..<3 { XCTAssertTrue(isAdmitted(authenticator)) }
    // Another process's vault object: nothing shared with the authenticator but the files.
    let locked = try device.taskkey(["lock"])
    XCTAssertEqual(locked.status, 0, locked.stderr)
    XCTAssertFalse(isAdmitted(authenticator))
  }

  func testAnUnrelatedFileInTheVaultDirectoryLeavesTheVaultUnlocked() throws {
    let authenticator = GateAuthenticator(vaultDirectory: device.vaultDirectory)
    XCTAssertTrue(isAdmitted(authenticator))
    XCTAssertTrue(isAdmitted(authenticator))
    for index in 0..<3 {
      let unrelated = device.vaultDirectory + "/unrelated-\(index)"
      XCTAssertTrue(FileManager.default.createFile(atPath: unrelated, contents: Data("x".utf8)))
      XCTAssertTrue(isAdmitted(authenticator), "the watch saw a change; the files say still unlocked")
      XCTAssertTrue(isAdmitted(authenticator), "and the watch made again says so too")
      XCTAssertEqual(unlink(unrelated), 0)
      XCTAssertTrue(isAdmitted(authenticator))
    }
    // The watch made again still sees the lock at once.
    try vault.lock()
    XCTAssertFalse(isAdmitted(authenticator))
  }
}
