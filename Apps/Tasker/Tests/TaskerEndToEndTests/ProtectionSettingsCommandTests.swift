import Foundation
import TaskerTestSupport
import Testing

/// `tasker settings` reads and records the protection settings in the
/// vault; rows a database writer puts in `settings` change nothing
/// (issue 22, break 3).
@Suite("tasker settings: kept in the vault, not in the database")
struct ProtectionSettingsCommandTests {
  func settings(_ device: TestDevice) throws -> [String: Bool] {
    let shown = try device.tasker(["settings", "--json"])
    #expect(shown.status == 0, "\(shown.stderr)")
    return try #require(try shown.json() as? [String: Bool])
  }

  @Test func aDatabaseWriterCannotTurnSealingOff() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "first"]).status == 0)
    let tampered = try device.sqlite(
      "INSERT INTO settings VALUES ('body-encryption', 'off'), ('attachment-encryption', 'off')")
    #expect(tampered.status == 0, "\(tampered.stderr)")
    #expect(try settings(device)["encryption"] == true)
    let added = try device.tasker(["add", "second", "--notes", "-"], input: "the canary note")
    #expect(added.status == 0, "\(added.stderr)")
    let stored = try device.sqlite("SELECT notes FROM tasks WHERE id = 2").stdoutText
    #expect(stored.hasPrefix("tc1."), "\(stored)")
    #expect(!stored.contains("canary"))
  }

  @Test func theUsersChoiceHoldsWhateverTheDatabaseSays() throws {
    let device = try TestDevice()
    let set = try device.tasker(["settings", "set", "encryption", "off"])
    #expect(set.status == 0, "\(set.stderr)")
    #expect(set.stdoutText == "encryption             off\nattachment-encryption  off\n")
    #expect(
      try device.sqlite("DELETE FROM settings; INSERT INTO settings VALUES ('body-encryption', 'on')").status == 0)
    #expect(try settings(device)["encryption"] == false)
    #expect(try device.tasker(["add", "plain", "--notes", "-"], input: "plain by choice").status == 0)
    #expect(try device.sqlite("SELECT notes FROM tasks WHERE id = 1").stdoutText == "plain by choice\n")
  }

  @Test func aLockedVaultCannotSayAndNothingChanges() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["settings", "set", "encryption", "off"]).status == 0)
    #expect(try device.taskkey(["lock"]).status == 0)
    let before = try device.sqlite(".dump").stdoutText
    for arguments in [["settings"], ["settings", "set", "encryption", "on"]] {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 14, "\(arguments): \(refused.stderr)")
      #expect(refused.stdout.isEmpty)
      #expect(refused.stderr.hasSuffix("hint: run 'taskkey unlock'\n"))
    }
    let plain = try device.tasker(["add", "t", "--notes", "-"], input: "would be plain")
    #expect(plain.status == 14, "the setting cannot be read, so the note is not written: \(plain.stderr)")
    #expect(try device.sqlite(".dump").stdoutText == before)
  }
}
