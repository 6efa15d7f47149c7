import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 11, case 5: after `retire` on device A, importing a bundle that
/// device B made before it learned of the retirement added the key again,
/// and values it sealed opened again. Retirements now travel with the
/// synchronisable store and win over an older bundle.
@Suite("Retired keys stay retired across devices")
struct RetirementSyncTests {
  func export(_ vault: CLIVault, _ name: String) throws -> String {
    let path = vault.home.path(name)
    let result = try vault.run(["sync", "export", "--out", path, "--passphrase-file", vault.passphraseFile])
    #expect(result.status == 0, "\(result.stderr)")
    return path
  }

  func importBundle(_ vault: CLIVault, _ path: String) throws -> ProcessResult {
    try vault.run(["sync", "import", path, "--json", "--passphrase-file", vault.passphraseFile])
  }

  @Test func aRetirementWinsOverAnOlderBundleOnBothDevices() throws {
    let deviceA = try CLIVault()
    let deviceB = try CLIVault()
    let sealed = try deviceA.run(["seal", "--context", "note/1/body"], text: "leaked key's note")
    #expect(sealed.status == 0)
    let oldKey = String(sealed.stdoutText.dropFirst(4).prefix(8))
    #expect(try importBundle(deviceB, try export(deviceA, "a0.tksync")).status == 0)

    #expect(try deviceA.run(["rotate"]).status == 0)
    let retired = try deviceA.run(["retire", oldKey, "--force"])
    #expect(retired.status == 0, "\(retired.stderr)")
    #expect(try deviceA.run(["open", "--context", "note/1/body"], input: sealed.stdout).status == 11)

    // B still holds the key and exports it; A must not take it back.
    let stale = try importBundle(deviceA, try export(deviceB, "b1.tksync"))
    #expect(stale.status == 0, "\(stale.stderr)")
    #expect(stale.stdoutText.contains(#""refusedRetiredKeyIDs":["\#(oldKey)"]"#), "\(stale.stdoutText)")
    let reopened = try deviceA.run(["open", "--context", "note/1/body"], input: sealed.stdout)
    #expect(reopened.status == 11, "a retired key came back from an older bundle")

    // A's bundle carries the retirement to B, which retires the key too.
    let carried = try importBundle(deviceB, try export(deviceA, "a2.tksync"))
    #expect(carried.status == 0, "\(carried.stderr)")
    #expect(carried.stdoutText.contains(#""retiredKeyIDs":["\#(oldKey)"]"#), "\(carried.stdoutText)")
    #expect(try deviceB.run(["open", "--context", "note/1/body"], input: sealed.stdout).status == 11)
  }

  @Test func aBundleThatRetiresThePrimaryHereIsRefusedAndChangesNothing() throws {
    let deviceA = try CLIVault()
    let deviceB = try CLIVault()
    let shared = try export(deviceA, "a0.tksync")
    #expect(
      try deviceB.run(["sync", "import", shared, "--adopt-primary", "--passphrase-file", deviceB.passphraseFile])
        .status == 0)
    let primary = try deviceA.run(["seal"], text: "x").stdoutText.dropFirst(4).prefix(8)
    #expect(try deviceA.run(["rotate"]).status == 0)
    #expect(try deviceA.run(["retire", String(primary), "--force"]).status == 0)
    let before = try fileBytes(deviceB.directory + "/vault.tkv")
    let refused = try importBundle(deviceB, try export(deviceA, "a1.tksync"))
    #expect(refused.status == 65, "\(refused.stderr)")
    #expect(refused.stderr.contains("retired"))
    #expect(try fileBytes(deviceB.directory + "/vault.tkv") == before)
  }
}
