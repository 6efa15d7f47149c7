import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 11, case 15: `verify` and `item set` used to echo a secret pasted
/// at a terminal. Now a prompt goes to standard error and the line is read
/// with echo off.
@Suite("Secrets typed at a terminal")
struct SecretPromptTests {
  @Test func itemSetReadsTheValueWithEchoOff() throws {
    let vault = try CLIVault()
    let outcome = try TerminalDriver.drive(
      ["item", "set", "api/token"], home: vault.home,
      steps: [("Value of api/token: ", "sk-PASTED-9f8e7d\n")], interactive: true)
    #expect(outcome.status == 0, "\(outcome.terminal)")
    #expect(!outcome.terminal.contains("sk-PASTED"), "the value was echoed: \(outcome.terminal)")
    #expect(outcome.stdout.isEmpty)
    let stored = try vault.run(["item", "get", "api/token"])
    #expect(stored.stdoutText == "sk-PASTED-9f8e7d\n")
  }

  @Test func verifyReadsTheKeyWithEchoOff() throws {
    let vault = try CLIVault()
    let minted = try vault.run(["mint", "--name", "planner"])
    #expect(minted.status == 0, "\(minted.stderr)")
    let key = try #require(minted.stdoutText.split(separator: "\n").first { $0.hasPrefix("tk_") })
    let outcome = try TerminalDriver.drive(
      ["verify"], home: vault.home, steps: [("Assistant key: ", String(key) + "\n")], interactive: true)
    #expect(outcome.status == 0, "\(outcome.terminal)")
    #expect(!outcome.terminal.contains(String(key.dropFirst(3).prefix(20))), "the key was echoed")
    #expect(outcome.stdout.contains("name: planner"))
  }
}
