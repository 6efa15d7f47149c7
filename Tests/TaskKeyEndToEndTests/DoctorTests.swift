import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@Suite("taskkey doctor")
struct DoctorTests {
  @Test func aHealthyVaultExitsZeroAndReportsUnlockStateAndKDF() throws {
    let vault = try CLIVault()
    let result = try vault.run(["doctor", "--json"])
    #expect(result.status == 0, "\(result.stdoutText)")
    let report = try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any]
    #expect(report?["healthy"] as? Bool == true)
    let findings = report?["findings"] as? [[String: Any]] ?? []
    #expect(
      findings.contains {
        $0["check"] as? String == "unlock-state" && ($0["message"] as? String)?.hasPrefix("unlocked") == true
      })
    #expect(findings.contains { $0["check"] as? String == "kdf" && $0["severity"] as? String == "warning" })
    #expect(findings.contains { $0["check"] as? String == "key-usage" && $0["severity"] as? String == "ok" })
  }

  @Test func missingMarkersAndLooseModesAreReportedThenRepaired() throws {
    let vault = try CLIVault()
    let deviceOnly = vault.directory + "/device-only"
    unlink(deviceOnly + "/CACHEDIR.TAG")
    unlink(deviceOnly + "/.nobackup")
    chmod(vault.directory + "/vault.tkv", 0o644)
    chmod(deviceOnly, 0o755)
    let report = try vault.run(["doctor"])
    #expect(report.status == 18)
    #expect(report.stdoutText.contains("CACHEDIR.TAG is missing"))
    #expect(report.stdoutText.contains("vault.tkv has mode 644"))
    let repaired = try vault.run(["doctor", "--repair"])
    #expect(repaired.status == 0, "\(repaired.stdoutText)")
    #expect(repaired.stdoutText.contains("fixed"))
    let tag = try String(contentsOfFile: deviceOnly + "/CACHEDIR.TAG", encoding: .utf8)
    #expect(tag.hasPrefix("Signature: 8a477f597d28d172789f06886806bc55\n"))
    #expect(FileManager.default.fileExists(atPath: deviceOnly + "/.nobackup"))
    #expect(try mode(vault.directory + "/vault.tkv") == 0o600)
    #expect(try mode(deviceOnly) == 0o700)
    #expect(try vault.run(["doctor"]).status == 0)
  }

  @Test func noVaultIsExitSixteen() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    #expect(try vault.run(["doctor"]).status == 16)
  }
}

@Suite("A vault without its device-only directory")
struct MissingDeviceOnlyTests {
  @Test func stillUnlocksWithAnEmptyDeviceOnlyStoreAndAnEmptyRegistry() throws {
    let vault = try FullVault()
    try FullVault.check(vault.cli.run(["lock"]))
    // As after restoring the data directory from a system backup that honoured the markers.
    try FileManager.default.removeItem(atPath: vault.directory + "/device-only")
    try FullVault.check(vault.cli.run(["unlock", "--passphrase-file", vault.cli.passphraseFile]))
    let status = try vault.cli.run(["status"])
    #expect(status.stdoutText.contains("device-only: absent"), "\(status.stdoutText)")
    #expect(
      try vault.cli.run(["item", "get", "calendar/token"]).stdoutText.trimmingCharacters(in: .newlines)
        == vault.syncSecret)
    #expect(try vault.cli.run(["item", "get", "provider/openai"]).status == 19)
    #expect(try vault.cli.run(["verify"], text: vault.assistantKey).status == 22, "fail closed")
    // The first device-only write makes the store and the markers again.
    try FullVault.check(vault.cli.run(["item", "set", "provider/new", "--device-only"], text: "v"))
    #expect(FileManager.default.fileExists(atPath: vault.directory + "/device-only/CACHEDIR.TAG"))
    #expect(try vault.cli.run(["status", "--json"]).stdoutText.contains("\"device_only_store\":\"present\""))
  }

  @Test func aPassphraseChangeRewritesOnlyTheVaultFile() throws {
    let vault = try FullVault()
    let device = try fileBytes(vault.directory + "/device-only/device.tkv")
    let newPassphrase = vault.home.path("new")
    try writePrivate(newPassphrase, "another passphrase\n")
    try FullVault.check(
      vault.cli.run([
        "passphrase", "--passphrase-file", vault.cli.passphraseFile, "--new-passphrase-file", newPassphrase,
      ]))
    #expect(try fileBytes(vault.directory + "/device-only/device.tkv") == device)
    try FullVault.check(vault.cli.run(["lock"]))
    try FullVault.check(vault.cli.run(["unlock", "--passphrase-file", newPassphrase]))
    #expect(
      try vault.cli.run(["item", "get", "provider/openai"]).stdoutText.trimmingCharacters(in: .newlines)
        == vault.deviceSecret)
  }
}
