import Foundation
import TaskKeyTestSupport
import Testing

/// `taskkey mint`, `verify`, `revoke`, `rotate` and `list`, end to end
/// through the real binary in a throwaway, unlocked vault.
@Suite("taskkey assistant-key commands, end to end")
struct AssistantCommandTests {
  static let keyPattern = try! NSRegularExpression(pattern: "^tk_[0-9A-Za-z]{49}\n$")

  /// A key minted through the binary: the key text (test only) and its id.
  struct Minted {
    let key: String
    let id: String
  }

  func mint(_ vault: CLIVault, _ arguments: [String] = ["--name", "agent"]) throws -> Minted {
    let result = try vault.run(["mint", "--json"] + arguments)
    #expect(result.status == 0, "\(result.stderr)")
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    return Minted(key: try #require(object["key"] as? String), id: try #require(object["id"] as? String))
  }

  @Test func mintPrintsOnlyTheKeyOnStandardOutputAndTheRestOnStandardError() throws {
    let vault = try CLIVault()
    let result = try vault.run(["mint", "--name", "desktop", "--trust", "restricted", "--grant", "notes:read"])
    #expect(result.status == 0, "\(result.stderr)")
    let text = result.stdoutText
    #expect(Self.keyPattern.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil, "\(text)")
    let key = String(text.dropLast())
    #expect(result.stderr.contains("tkid_"))
    #expect(result.stderr.contains("shown once"))
    #expect(result.stderr.contains("trust restricted, grants notes:read"))
    #expect(!result.stderr.contains(key))
    let verified = try vault.run(["verify"], text: text)
    #expect(verified.status == 0)
    #expect(verified.stdoutText.contains("name: desktop\ntrust: restricted\ngrants: notes:read\nexpires: never\n"))
  }

  @Test func mintJSONIsOneObjectThatHoldsTheKeyAndNothingGoesToStandardError() throws {
    let vault = try CLIVault()
    let result = try vault.run([
      "mint", "--name", "a", "--grant", "tasks:write", "--grant", "notes:read", "--expires", "30d", "--json",
    ])
    #expect(result.status == 0)
    #expect(result.stderr.isEmpty)
    let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
    #expect(
      Set(object.keys) == [
        "key", "id", "name", "trust", "grants", "created", "expires", "status", "revoked", "overlap_until", "last_used",
      ])
    #expect(object["grants"] as? [String] == ["notes:read", "tasks:write"])
    #expect(object["status"] as? String == "active")
    let key = try #require(object["key"] as? String)
    #expect(try vault.run(["verify"], text: key).status == 0)
  }

  @Test func verifyTakesTheKeyFromStandardInputWithOrWithoutOneNewline() throws {
    let vault = try CLIVault()
    let minted = try mint(vault, ["--name", "agent", "--grant", "notes:read"])
    for input in [minted.key, minted.key + "\n"] {
      let result = try vault.run(["verify", "--json"], text: input)
      #expect(result.status == 0, "\(result.stderr)")
      let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout)) as? [String: Any])
      #expect(object["id"] as? String == minted.id)
      #expect(object["name"] as? String == "agent")
      #expect(object["trust"] as? String == "standard")
      #expect(object["grants"] as? [String] == ["notes:read"])
      #expect(result.stderr.isEmpty)
    }
    // Only one newline is ignored; CR LF and a second newline are not.
    #expect(try vault.run(["verify"], text: minted.key + "\n\n").status == 20)
    #expect(try vault.run(["verify"], text: minted.key + "\r\n").status == 20)
  }

  @Test func verifyRefusesAKeyOnTheCommandLine() throws {
    let vault = try CLIVault()
    let minted = try mint(vault)
    let result = try vault.run(["verify", minted.key])
    #expect(result.status == 64)
    #expect(result.stdout.isEmpty)
    #expect(!result.stderr.contains(minted.key))
    #expect(result.stderr.contains("standard input"))
  }

  @Test func everyVerifyFailureExitsWithItsOwnCode() throws {
    let vault = try CLIVault()
    let good = try mint(vault, ["--name", "good"])
    let revoked = try mint(vault, ["--name", "revoked"])
    #expect(try vault.run(["revoke", revoked.id]).status == 0)
    let expiring = try mint(vault, ["--name", "expiring", "--expires", "1s"])
    var typo = Array(good.key.utf8)
    typo[20] = typo[20] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
    // A well-formed key that was never minted here (Vectors/assistant-key-v1.json, case 1).
    let stranger = "tk_00000000000000000000000000000000000000000001LBmmQ"
    Thread.sleep(forTimeInterval: 1.1)

    var codes = [String: Int32]()
    codes["malformed"] = try vault.run(["verify"], text: "tk_short\n").status
    codes["checksum"] = try vault.run(["verify"], input: typo).status
    codes["unknown"] = try vault.run(["verify"], text: stranger).status
    codes["revoked"] = try vault.run(["verify"], text: revoked.key).status
    codes["expired"] = try vault.run(["verify"], text: expiring.key).status
    let registry = vault.directory + "/device-only/assistant-keys.registry"
    let original = try Data(contentsOf: URL(fileURLWithPath: registry))
    // The name in the good key's record (version 2 is binary: edit bytes).
    let edited = original.replacing(Data(" good ".utf8), with: Data(" gooD ".utf8))
    #expect(edited != original)
    try edited.write(to: URL(fileURLWithPath: registry))
    let damaged = try vault.run(["verify"], text: good.key)
    codes["damaged"] = damaged.status
    #expect(damaged.stderr.contains("cannot be trusted"))
    try original.write(to: URL(fileURLWithPath: registry))
    #expect(try vault.run(["verify"], text: good.key).status == 0)
    #expect(try vault.run(["lock"]).status == 0)
    codes["locked"] = try vault.run(["verify"], text: good.key).status

    #expect(
      codes == [
        "malformed": 20, "checksum": 21, "unknown": 22, "revoked": 23, "expired": 24, "damaged": 15, "locked": 14,
      ])
  }

  @Test func revokeIsImmediateAndListMarksTheKeyRevoked() throws {
    let vault = try CLIVault()
    let minted = try mint(vault)
    let revoked = try vault.run(["revoke", minted.id])
    #expect(revoked.status == 0)
    #expect(revoked.stdoutText == "revoked \(minted.id) (assistant 'agent')\n")
    #expect(try vault.run(["verify"], text: minted.key).status == 23)
    #expect(try vault.run(["revoke", minted.id]).status == 0, "revoking again succeeds")
    let list = try vault.run(["list"])
    #expect(list.stdoutText.contains("\(minted.id)\trevoked\tagent\t"))
    #expect(try vault.run(["revoke", "tkid_0000000000000000"]).status == 22)
    #expect(try vault.run(["revoke", "tk_not-an-id"]).status == 64)
    #expect(try vault.run(["revoke"]).status == 64)
  }

  @Test func revokedKeyStaysRevokedAfterTheVaultIsLockedAndUnlockedAgain() throws {
    let vault = try CLIVault()
    let minted = try mint(vault)
    #expect(try vault.run(["revoke", minted.id]).status == 0)
    // As after a reboot: the unlocked state is gone and comes back with the passphrase.
    #expect(try vault.run(["lock"]).status == 0)
    #expect(try vault.run(["verify"], text: minted.key).status == 14)
    #expect(try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]).status == 0)
    #expect(try vault.run(["verify"], text: minted.key).status == 23)
  }

  @Test func concurrentFirstMintsShareOneIntegrityKeyAndLoseNoKey() throws {
    let vault = try CLIVault()
    let count = 8
    let keys = KeyBox(count: count)
    DispatchQueue.concurrentPerform(iterations: count) { index in
      let result = try? vault.run(["mint", "--name", "agent-\(index)"])
      keys.set(index, result?.status == 0 ? result?.stdoutText : nil)
    }
    let minted = keys.all
    #expect(minted.allSatisfy { $0 != nil })
    for key in minted.compactMap({ $0 }) {
      #expect(try vault.run(["verify"], text: key).status == 0)
    }
    // One integrity key (the item is internal and not listed): the registry
    // authenticates, and doctor says so.
    let doctor = try vault.run(["doctor"])
    #expect(doctor.stdoutText.contains("registry: authenticated: \(count) assistant key(s)"), "\(doctor.stdoutText)")
    #expect(try vault.run(["list"]).stdoutText.split(separator: "\n").count == count + 1)
  }

  @Test func rotateWithOverlapKeepsBothKeysAndWithoutRevokesTheOld() throws {
    let vault = try CLIVault()
    let first = try mint(vault, ["--name", "agent", "--trust", "elevated"])
    let second = try vault.run(["rotate", "--assistant", "agent", "--overlap", "1h"])
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.stderr.contains("stops verifying in 1h"))
    let secondKey = String(second.stdoutText.dropLast())
    #expect(!second.stderr.contains(secondKey))
    #expect(try vault.run(["verify"], text: first.key).status == 0)
    #expect(try vault.run(["verify"], text: secondKey).stdoutText.contains("trust: elevated"))
    let list = try vault.run(["list", "--json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(list.stdout)) as? [String: Any])
    let keys = try #require(object["keys"] as? [[String: Any]])
    #expect(keys.compactMap { $0["status"] as? String }.sorted() == ["active", "overlapping"])
    let third = try vault.run(["rotate", "--assistant", "agent"])
    #expect(third.status == 0)
    #expect(try vault.run(["verify"], text: secondKey).status == 23)
    #expect(try vault.run(["verify"], text: third.stdoutText).status == 0)
    // Without --assistant, rotate makes a new note key; --overlap alone is a usage error.
    #expect(try vault.run(["rotate", "--overlap", "1h"]).status == 64)
    #expect(try vault.run(["rotate", "--assistant", "nobody"]).status == 22)
    #expect(try vault.run(["mint", "--name", "agent"]).status == 73, "a name with a current key must be rotated")
  }

  @Test func listAndErrorsNeverShowAKey() throws {
    let vault = try CLIVault()
    let minted = try mint(vault)
    _ = try vault.run(["verify"], text: minted.key)
    var outputs = [try vault.run(["list"]), try vault.run(["list", "--json"])]
    outputs.append(try vault.run(["verify", "--nope"], text: minted.key))
    outputs.append(try vault.run(["revoke", minted.id]))
    outputs.append(try vault.run(["verify"], text: minted.key))
    for result in outputs {
      #expect(!result.stdoutText.contains(minted.key))
      #expect(!result.stderr.contains(minted.key))
      #expect(!result.stdoutText.contains(String(minted.key.dropFirst(3).prefix(16))))
    }
    #expect(outputs[0].stdoutText.hasPrefix("ID\tSTATUS\tNAME\tTRUST\tCREATED\tEXPIRES\tLAST USED\tGRANTS\n"))
    #expect(outputs[2].status == 64)
  }

  @Test func badOptionsAreUsageErrors() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    for arguments in [
      ["mint"], ["mint", "--name", "a", "--trust", "root"], ["mint", "--name", "a", "--expires", "0s"],
      ["mint", "--name", "a", "--expires", "4000d"], ["mint", "--name", "a", "extra"], ["list", "extra"],
      ["rotate", "--assistant", "a", "--overlap", "soon"],
    ] {
      let result = try vault.run(arguments)
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stderr.contains("usage: taskkey \(arguments[0])"), "\(arguments)")
    }
    #expect(try vault.run(["mint", "--name", "bad name"]).status == 16, "no vault yet")
  }

  @Test func everyAssistantCommandHasHelp() throws {
    let vault = try CLIVault(initialise: false, unlock: false)
    for command in ["mint", "verify", "revoke", "rotate", "list"] {
      let result = try vault.run([command, "--help"])
      #expect(result.status == 0)
      #expect(result.stdoutText.hasPrefix("OVERVIEW: "))
      #expect(result.stdoutText.contains("EXAMPLE:"))
    }
    let help = try vault.run(["--help"])
    #expect(help.stdoutText.contains("  20    assistant key malformed"))
    #expect(help.stdoutText.contains("  24    assistant key expired"))
  }
}

/// Results filled in from concurrent runs.
final class KeyBox: @unchecked Sendable {
  private let lock = NSLock()
  private var values: [String?]

  init(count: Int) { values = Array(repeating: nil, count: count) }

  func set(_ index: Int, _ value: String?) {
    lock.lock()
    values[index] = value
    lock.unlock()
  }

  var all: [String?] {
    lock.lock()
    defer { lock.unlock() }
    return values
  }
}
