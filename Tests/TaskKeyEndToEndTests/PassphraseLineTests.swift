import Foundation
import TaskKeyTestSupport
import Testing

/// A passphrase line ends with LF or CR LF (docs/formats/vault-file.md,
/// "Passphrase bytes"), so a passphrase file written on another system
/// opens the same vault.
@Suite("Passphrase lines")
struct PassphraseLineTests {
  @Test func aCRLFPassphraseFileOpensAVaultMadeWithAnLFOne() throws {
    let vault = try CLIVault(passphrase: "correct horse battery", unlock: false)
    let crlf = vault.home.path("crlf.pass")
    try writePrivate(crlf, "correct horse battery\r\n")
    let unlocked = try vault.run(["unlock", "--passphrase-file", crlf])
    #expect(unlocked.status == 0, "\(unlocked.stderr)")
    // Trailing spaces are part of the passphrase: not the same one.
    let spaced = vault.home.path("spaced.pass")
    try writePrivate(spaced, "correct horse battery \n")
    #expect(try vault.run(["unlock", "--passphrase-file", spaced]).status == 13)
  }

  /// The 1,024-byte limit counts the line without its line end, from a
  /// file and from a descriptor alike: 1,024 bytes and CR LF open a vault
  /// made with 1,024 bytes and LF (issue 22, item 14: refused as too long
  /// before), 1,023 bytes are another passphrase (13), 1,025 are refused
  /// (41) with either line end.
  @Test func theLimitCountsTheLineWithoutItsLineEnd() throws {
    let limit = String(repeating: "a", count: 1024)
    let vault = try CLIVault(passphrase: limit, unlock: false)
    let cases: [(line: String, status: Int32)] = [
      (limit + "\n", 0), (limit + "\r\n", 0), (limit + "\r", 0),
      (String(limit.dropLast()) + "\n", 13), (String(limit.dropLast()) + "\r\n", 13),
      (limit + "a\n", 41), (limit + "a\r\n", 41), (limit + "\r\r\n", 41),
    ]
    for (index, (line, status)) in cases.enumerated() {
      let file = vault.home.path("limit-\(index).pass")
      try writePrivate(file, line)
      let fromFile = try vault.run(["unlock", "--passphrase-file", file])
      #expect(fromFile.status == status, "file, case \(index): \(fromFile.stderr)")
      let fromDescriptor = try vault.run(["unlock", "--passphrase-fd", "0"], text: line)
      #expect(fromDescriptor.status == status, "fd, case \(index): \(fromDescriptor.stderr)")
      _ = try vault.run(["lock"])
    }
  }

  /// SECURITY.md §10 gives each passphrase refusal the exit code the
  /// binary uses (§11: 41), one truth for both tables.
  @Test func theOutcomeTableGivesThePassphraseRefusalsTheBinarysExitCode() throws {
    let security = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("SECURITY.md"), encoding: .utf8)
    let chapter =
      try #require(security.components(separatedBy: "\n## 10. Outcome names\n").last)
      .components(separatedBy: "\n## ").first ?? ""
    func documentedExit(_ name: String) -> String? {
      chapter.split(separator: "\n").first { $0.hasPrefix("| `\(name)` |") }?.split(separator: "|").last
        .map { $0.trimmingCharacters(in: .whitespaces) }
    }
    let vault = try CLIVault(unlock: false)
    let empty = vault.home.path("empty.pass")
    try writePrivate(empty, "\n")
    let long = vault.home.path("long.pass")
    try writePrivate(long, String(repeating: "a", count: 1025) + "\n")
    for (name, file) in [("empty_passphrase", empty), ("passphrase_too_long", long)] {
      let result = try vault.run(["unlock", "--passphrase-file", file])
      #expect(documentedExit(name) == "\(result.status)", "\(name): \(result.stderr)")
    }
  }
}
