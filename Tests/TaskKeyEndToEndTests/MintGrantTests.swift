import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 23, break 8: `taskkey mint --grant task:write` (a typo) minted a
/// key whose every write the gate then refused. A grant outside
/// `AssistantKeyRegistry.knownGrants` is now a usage error (64), with the
/// closest known grant suggested, and no key is minted.
@Suite("taskkey mint refuses a grant it does not know")
struct MintGrantTests {
  @Test func aMistypedGrantIsAUsageErrorThatSuggestsTheKnownOneAndMintsNothing() throws {
    let vault = try CLIVault()
    let result = try vault.run(["mint", "--name", "agent", "--grant", "notes:read", "--grant", "task:write"])
    #expect(result.status == 64, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("unknown --grant 'task:write'; did you mean 'tasks:write'?"), "\(result.stderr)")
    #expect(result.stderr.contains("usage: taskkey mint"))
    let listed = try vault.run(["list"])
    #expect(listed.status == 0)
    #expect(!listed.stdoutText.contains("agent"), "nothing was minted: \(listed.stdoutText)")
  }

  @Test func aGrantFarFromEveryKnownOneListsThem() throws {
    let vault = try CLIVault()
    let result = try vault.run(["mint", "--name", "agent", "--grant", "x:y"])
    #expect(result.status == 64, "\(result.stderr)")
    #expect(
      result.stderr.contains("unknown --grant 'x:y'; use notes:read, pages:write or tasks:write"), "\(result.stderr)")
  }

  @Test func everyKnownGrantMints() throws {
    let vault = try CLIVault()
    let result = try vault.run([
      "mint", "--name", "agent", "--grant", "notes:read", "--grant", "pages:write", "--grant", "tasks:write",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("grants notes:read,pages:write,tasks:write"), "\(result.stderr)")
  }
}
