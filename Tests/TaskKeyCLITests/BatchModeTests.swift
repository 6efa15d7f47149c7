import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskVault
import Testing

/// JSON-lines seal and open, streaming rewrap and retire over several
/// inputs, through the real binary: values replaced in place with every
/// other byte of a line kept, plain values reported as sealed, all or
/// nothing to a file.
@Suite("Batch seal, open, rewrap and retire")
struct BatchModeTests {
  static let lines = [
    #"{"id":1, "ctx":"note/1/body", "body":"hello \"world\"\n\u00e9\ud83d\ude00", "tags":[1,2.5e3,{"x":null}]}"#,
    #"{"id":2,"ctx":"note/2/body","body":null}"#,
    #"{"ctx":"note/3/body","id":3}"#,
    #"{"id":4,"ctx":"note/4/body","body":"plain"}"#,
  ]

  @Test func sealAndOpenRoundTripJSONLinesKeepingEveryOtherByte() throws {
    let vault = try CLIVault()
    let input = Self.lines.joined(separator: "\n") + "\n"
    let sealed = try vault.run(["seal", "--field", "body", "--context-field", "ctx"], text: input)
    #expect(sealed.status == 0, "\(sealed.stderr)")
    #expect(sealed.stderr.contains("seal: 2 sealed under"))
    let sealedLines = sealed.stdoutText.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(sealedLines.count == 5)
    #expect(sealedLines[0].hasPrefix(#"{"id":1, "ctx":"note/1/body", "body":"tc1."#))
    #expect(sealedLines[0].hasSuffix(#"", "tags":[1,2.5e3,{"x":null}]}"#))
    #expect(Array(sealedLines[1...2]) == Array(Self.lines[1...2]))
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let object = try #require(try JSONSerialization.jsonObject(with: Data(sealedLines[3].utf8)) as? [String: Any])
    #expect(
      try SealedValue.open(try #require(object["body"] as? String), using: keyring, context: "note/4/body") == "plain")

    // Sealing again leaves sealed values as they are.
    let again = try vault.run(["seal", "--field", "body", "--context-field", "ctx"], text: sealed.stdoutText)
    #expect(again.stdoutText == sealed.stdoutText)
    #expect(again.stderr.contains("0 sealed under \(keyring.primaryID), 2 already sealed"))

    let opened = try vault.run(["open", "--field", "body", "--context-field", "ctx"], text: sealed.stdoutText)
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.stderr.contains("open: 2 opened, 0 plain passed through"))
    let first = try #require(
      try JSONSerialization.jsonObject(with: Data(opened.stdoutText.split(separator: "\n")[0].utf8)) as? [String: Any])
    #expect(first["body"] as? String == "hello \"world\"\né😀")
    #expect(opened.stdoutText.split(separator: "\n").dropFirst().map(String.init) == Array(Self.lines.dropFirst()))
  }

  @Test func openRefusesTheWholeBatchWhenOneValueFailsAndLeavesTheOutFileAlone() throws {
    let vault = try CLIVault()
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let good = try SealedValue.seal("fine", using: keyring, context: "c")
    let bad = try SealedValue.seal("moved", using: keyring, context: "elsewhere")
    let input = vault.home.path("in.jsonl")
    let out = vault.home.path("out.jsonl")
    try "{\"v\":\"\(good)\"}\n{\"v\":\"\(bad)\"}\n".write(toFile: input, atomically: true, encoding: .utf8)
    try "previous contents\n".write(toFile: out, atomically: true, encoding: .utf8)
    let result = try vault.run(["open", "--field", "v", "--context", "c", "--input", input, "--out", out])
    #expect(result.status == 10)
    #expect(result.stderr.contains("line 2: authentication failed"))
    #expect(try String(contentsOfFile: out, encoding: .utf8) == "previous contents\n")
    let left = try FileManager.default.contentsOfDirectory(atPath: vault.home.path(""))
    #expect(!left.contains { $0.hasSuffix(".tmp") }, "a temporary file was left: \(left)")
  }

  @Test func rewrapToAFileReplacesItWholeEvenInPlace() throws {
    let vault = try CLIVault()
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let file = vault.home.path("notes.txt")
    let values = try (0..<300).map { try SealedValue.seal("note \($0)", using: keyring, context: "c") }
    try (values.joined(separator: "\n") + "\nplain\n").write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try vault.run(["rotate"]).status == 0)
    let result = try vault.run(["rewrap", "--context", "c", "--input", file, "--out", file])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("300 re-sealed"))
    #expect(result.stderr.contains("1 plain passed through"))
    let rotated = try Vault(at: vault.directory).noteKeyring()
    let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
    #expect(lines.count == 301)
    for (index, line) in lines.prefix(300).enumerated() {
      #expect(try SealedValue.keyID(of: line) == rotated.primaryID)
      #expect(try SealedValue.open(line, using: rotated, context: "c") == "note \(index)")
    }
    let mode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
    #expect(mode == 0o600)
  }

  @Test func retireChecksEveryInputAndNamesTheFileThatStillUsesTheKey() throws {
    let vault = try CLIVault()
    let keyring = try Vault(at: vault.directory).noteKeyring()
    let old = keyring.primaryID
    #expect(try vault.run(["rotate"]).status == 0)
    let rotated = try Vault(at: vault.directory).noteKeyring()
    let clean = vault.home.path("clean.txt")
    let stale = vault.home.path("stale.txt")
    try "\(try SealedValue.seal("a", using: rotated))\n".write(toFile: clean, atomically: true, encoding: .utf8)
    try "plain\n\(try SealedValue.seal("b", using: keyring))\n".write(toFile: stale, atomically: true, encoding: .utf8)
    let refused = try vault.run(["retire", old.hex, "--input", clean, "--input", stale])
    #expect(refused.status == 17)
    #expect(refused.stderr.contains("first in \(stale), line 2"))
    #expect(try Vault(at: vault.directory).noteKeyring().key(for: old) != nil)
    let retired = try vault.run(["retire", old.hex, "--input", clean, "--input", clean])
    #expect(retired.status == 0, "\(retired.stderr)")
  }

  @Test(arguments: [
    (["seal", "--input", "x"], 64), (["open", "--out", "x"], 64), (["seal", "--field", "v", "--exact"], 64),
    (["open", "--field", "v", "--input", "-", "--input", "-"], 64),
  ])
  func batchOptionsOutsideBatchModeAreUsageErrors(arguments: [String], status: Int) throws {
    let vault = try CLIVault()
    #expect(Int(try vault.run(arguments, text: "").status) == status)
  }

  @Test(arguments: [
    #"not json"#, #"{"v": 1}"#, #"{"v": "a", "v": "b"}"#, #"{"v": "a"} trailing"#, #"{"v": "\ud800"}"#,
    #"{"v": "a\u0001"}"#, #"{"v": 01}"#, #"[1]"#,
  ])
  func malformedJSONLinesAreRefusedWithTheirLineNumber(line: String) throws {
    let vault = try CLIVault()
    let raw = line.replacingOccurrences(of: "\\u0001", with: "\u{01}")
    let result = try vault.run(["seal", "--field", "v"], text: "{\"v\":\"ok\"}\n" + raw + "\n")
    #expect(result.status == 65, "\(line): \(result.stderr)")
    #expect(result.stderr.contains("line 2:"))
    #expect(result.stdout.isEmpty)
  }
}
