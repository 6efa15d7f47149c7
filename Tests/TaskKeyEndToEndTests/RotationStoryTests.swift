import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskVault
import Testing

/// The note-key rotation story end to end through the real binary:
/// seal, rotate, rewrap, retire, open.
@Suite("Note-key rotation: rotate, rewrap, retire")
struct RotationStoryTests {
  /// 10,000 values sealed under the vault's current primary, one JSON line
  /// each with its own context, as an app's export would hold them.
  func sealedNotes(_ vault: CLIVault, count: Int) throws -> (lines: [String], plaintexts: [String]) {
    let keyring = try Vault(at: vault.directory).noteKeyring()
    var lines = [String]()
    var plaintexts = [String]()
    for index in 0..<count {
      let text = "note \(index): buy \(index % 7) apples"
      let sealed = try SealedValue.seal(text, using: keyring, context: "note/\(index)/body")
      lines.append(#"{"body":"\#(sealed)","ctx":"note/\#(index)/body","id":\#(index)}"#)
      plaintexts.append(text)
    }
    return (lines, plaintexts)
  }

  @Test func tenThousandValuesRotateRewrapRetireAndStillOpen() throws {
    let vault = try CLIVault()
    let old = try Vault(at: vault.directory).noteKeyring().primaryID
    let (lines, plaintexts) = try sealedNotes(vault, count: 10_000)

    let rotated = try vault.run(["rotate"])
    #expect(rotated.status == 0, "\(rotated.stderr)")
    let new = try KeyID(hex: rotated.stdoutText.trimmingCharacters(in: .newlines))
    #expect(new != old)
    #expect(try Vault(at: vault.directory).noteKeyring().primaryID == new)

    let input = lines.joined(separator: "\n") + "\n"
    let rewrapped = try vault.run(["rewrap", "--field", "body", "--context-field", "ctx"], text: input)
    #expect(rewrapped.status == 0, "\(rewrapped.stderr)")
    #expect(
      rewrapped.stderr.contains(
        "10000 re-sealed under \(new.hex), 0 sealed (were plain), 0 already current, 0 plain passed through"))
    let output = rewrapped.stdoutText.split(separator: "\n").map(String.init)
    #expect(output.count == 10_000)

    // Retire refuses while the old file still uses the old key, then succeeds.
    let oldFile = vault.home.path("old.jsonl")
    let newFile = vault.home.path("new.jsonl")
    try input.write(toFile: oldFile, atomically: true, encoding: .utf8)
    try rewrapped.stdoutText.write(toFile: newFile, atomically: true, encoding: .utf8)
    let refused = try vault.run(["retire", old.hex, "--input", oldFile, "--field", "body"])
    #expect(refused.status == 17)
    #expect(refused.stderr.contains("still seals 10000 value(s)"))
    let retired = try vault.run(["retire", old.hex, "--input", newFile, "--field", "body"])
    #expect(retired.status == 0, "\(retired.stderr)")

    let keyring = try Vault(at: vault.directory).noteKeyring()
    #expect(keyring.ids == [new])
    for (index, line) in output.enumerated() {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
      let body = try #require(object["body"] as? String)
      #expect(try SealedValue.keyID(of: body) == new)
      #expect(try SealedValue.open(body, using: keyring, context: "note/\(index)/body") == plaintexts[index])
      #expect(object["id"] as? Int == index)
    }
    // A value the old key sealed now fails closed, never as plain text.
    let stale = try vault.run(["open", "--context", "note/0/body"], text: try sealedBody(lines[0]))
    #expect(stale.status == 11)
    #expect(stale.stdout.isEmpty)
  }

  @Test func retireCatchesAValueLeftBehind() throws {
    let vault = try CLIVault()
    let old = try Vault(at: vault.directory).noteKeyring().primaryID
    let (lines, _) = try sealedNotes(vault, count: 50)
    #expect(try vault.run(["rotate"]).status == 0)
    let rewrapped = try vault.run(
      ["rewrap", "--field", "body", "--context-field", "ctx"], text: lines.joined(separator: "\n"))
    var output = rewrapped.stdoutText.split(separator: "\n").map(String.init)
    // One value is left under the old key, as if the app missed a record.
    output[37] = lines[37]
    try (output.joined(separator: "\n") + "\n").write(
      toFile: vault.home.path("mixed.jsonl"), atomically: true, encoding: .utf8)
    let refused = try vault.run(["retire", old.hex, "--input", vault.home.path("mixed.jsonl"), "--field", "body"])
    #expect(refused.status == 17)
    #expect(
      refused.stderr.contains(
        "still seals 1 value(s) in the input (first in \(vault.home.path("mixed.jsonl")), line 38)"))
    #expect(refused.stderr.contains("hint: run 'taskkey rewrap'"))
    #expect(try Vault(at: vault.directory).noteKeyring().key(for: old) != nil, "nothing was retired")
    // Several inputs: a clean file first, the one with the value left behind second.
    try (rewrapped.stdoutText).write(toFile: vault.home.path("clean.jsonl"), atomically: true, encoding: .utf8)
    let several = try vault.run(
      [
        "retire", old.hex, "-i", vault.home.path("clean.jsonl"), "--input", vault.home.path("mixed.jsonl"),
        "--field", "body",
      ])
    #expect(several.status == 17 && several.stderr.contains("first in \(vault.home.path("mixed.jsonl")), line 38"))
    let forced = try vault.run(["retire", old.hex, "--force"])
    #expect(forced.status == 0)
    #expect(try Vault(at: vault.directory).noteKeyring().key(for: old) == nil)
  }

  @Test func rewrapIsAllOrNothingAndNamesTheBadLine() throws {
    let vault = try CLIVault()
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let good = try SealedValue.seal("fine", using: keyring, context: "c")
    let bad = try SealedValue.seal("moved", using: keyring, context: "elsewhere")
    let result = try vault.run(["rewrap", "--context", "c"], text: "\(good)\nplain note\n\(bad)\n")
    #expect(result.status == 10)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("line 3: authentication failed"))
    #expect(result.stderr.contains("nothing was written"))
  }

  @Test func rewrapPassesPlainAndCurrentValuesAndSealsPlainOnRequest() throws {
    let vault = try CLIVault()
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let current = try SealedValue.seal("current", using: keyring, context: "c")
    let passed = try vault.run(["rewrap", "--context", "c"], text: "\(current)\nplain\n\n")
    #expect(passed.status == 0)
    #expect(passed.stdoutText == "\(current)\nplain\n\n")
    #expect(passed.stderr.contains("0 re-sealed"))
    let sealed = try vault.run(["rewrap", "--context", "c", "--seal-plain"], text: "plain\n")
    #expect(sealed.stderr.contains("0 re-sealed under \(keyring.primaryID), 1 sealed (were plain)"))
    let value = sealed.stdoutText.trimmingCharacters(in: .newlines)
    #expect(try SealedValue.open(value, using: keyring, context: "c") == "plain")
  }

  @Test func rotationUsageErrorsAndThePrimaryAreRefused() throws {
    let vault = try CLIVault()
    let primary = try Vault(at: vault.directory).noteKeyring().primaryID
    #expect(try vault.run(["retire", primary.hex]).status == 64)
    let refused = try vault.run(["retire", primary.hex, "--force"])
    #expect(refused.status == 17)
    #expect(refused.stderr.contains("is the primary key"))
    #expect(try vault.run(["retire", "XYZ", "--force"]).status == 65)
    #expect(try vault.run(["rotate", "--overlap", "1h"]).status == 64)
    #expect(try vault.run(["rewrap", "--context-field", "ctx"]).status == 64)
    let json = try vault.run(["rotate", "--json"])
    let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout)) as? [String: Any])
    #expect(object["previous"] as? String == primary.hex)
    #expect((object["keys"] as? [String])?.count == 2)
    let malformed = try vault.run(["rewrap", "--field", "body"], text: "not json\n")
    #expect(malformed.status == 65)
    #expect(malformed.stderr.contains("line 1: not a JSON object"))
  }

  func sealedBody(_ line: String) throws -> String {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    return try #require(object["body"] as? String)
  }
}
