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
}
