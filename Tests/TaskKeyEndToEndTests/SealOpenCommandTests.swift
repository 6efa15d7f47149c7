import Foundation
import TaskKeyTestSupport
import Testing

@Suite("taskkey seal, open and keygen")
struct SealOpenCommandTests {
  let home: TemporaryDirectory
  let keyPath: String

  init() throws {
    (home, keyPath) = try keyFileHome()
  }

  @Test func keygenWritesAnOwnerOnlyKeyFileAndPrintsItsID() throws {
    let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
    let contents = try String(contentsOfFile: keyPath, encoding: .utf8)
    #expect(contents.range(of: #"^[0-9a-f]{8}:[0-9a-f]{64}\n$"#, options: .regularExpression) != nil)
  }

  @Test func keygenRefusesToReplaceAFile() throws {
    let result = try TaskKeyBinary.run(["keygen", "--out", keyPath])
    #expect(result.status == 73)
    #expect(result.stderr.contains("already exists"))
  }

  @Test func sealThenOpenRoundTripsAndStripsOneNewline() throws {
    let sealed = try TaskKeyBinary.run(
      ["seal", "--key-file", keyPath, "--context", "note/1/body"], input: "buy milk\n")
    #expect(sealed.status == 0)
    #expect(sealed.stdoutText.hasPrefix("tc1."))
    let opened = try TaskKeyBinary.run(
      ["open", "--key-file", keyPath, "--context", "note/1/body"], stdin: sealed.stdout)
    #expect(opened.status == 0)
    #expect(opened.stdoutText == "buy milk\n")
    #expect(opened.stderr.isEmpty)
  }

  @Test func exactModeKeepsEveryByte() throws {
    let input: [UInt8] = [0, 1, 2, 10, 10, 255]
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", keyPath, "--exact"], stdin: input)
    let opened = try TaskKeyBinary.run(["open", "--key-file", keyPath, "--exact"], stdin: sealed.stdout)
    #expect(opened.status == 0)
    #expect(opened.stdout == input)
  }

  @Test func plainValuePassesThroughUnchanged() throws {
    let result = try TaskKeyBinary.run(["open", "--key-file", keyPath], input: "tc2. call Bob\n")
    #expect(result.status == 0)
    #expect(result.stdoutText == "tc2. call Bob\n")
  }

  /// `open --key-file F` checks F even for a plain value, which needs no key.
  @Test func aBadKeyFileIsRefusedEvenWhenTheValueIsPlain() throws {
    let missing = try TaskKeyBinary.run(["open", "--key-file", home.path("absent.key")], input: "plain note\n")
    #expect(missing.status == 66, "\(missing.stderr)")
    #expect(missing.stdout.isEmpty)
    let loose = home.path("loose.key")
    try FileManager.default.copyItem(atPath: keyPath, toPath: loose)
    chmod(loose, 0o644)
    let refused = try TaskKeyBinary.run(["open", "--key-file", loose], input: "plain note\n")
    #expect(refused.status == 77, "\(refused.stderr)")
    #expect(refused.stdout.isEmpty)
    let malformed = home.path("malformed.key")
    #expect(FileManager.default.createFile(atPath: malformed, contents: Data("not a key\n".utf8)))
    chmod(malformed, 0o600)
    let bad = try TaskKeyBinary.run(["open", "--key-file", malformed], input: "plain note\n")
    #expect(bad.status == 65, "\(bad.stderr)")
    #expect(bad.stdout.isEmpty)
  }

  /// The example in docs/formats/sealed-value.md opens with the binary to
  /// the plaintext the text names.
  @Test func theSpecificationsExampleOpensWithTheBinary() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent()
    let spec = try String(
      contentsOf: root.appendingPathComponent("docs/formats/sealed-value.md"), encoding: .utf8)
    let example = try #require(
      spec.split(separator: "\n").first { $0.hasPrefix("    tc1.0a0b0c0d:") }?.trimmingCharacters(in: .whitespaces))
    let exampleKey = home.path("example.key")
    let keyHex = (0..<32).map { String(format: "%02x", $0) }.joined()
    #expect(
      FileManager.default.createFile(
        atPath: exampleKey, contents: Data("0a0b0c0d:\(keyHex)\n".utf8), attributes: [.posixPermissions: 0o600]))
    let opened = try TaskKeyBinary.run(
      ["open", "--key-file", exampleKey, "--context", "note/42/body"], input: example + "\n")
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.stdoutText == "buy milk\n")
    #expect(spec.contains("context `note/42/body`, plaintext `buy milk`"))
  }

  @Test func wrongContextIsRefusedWithNothingOnStdout() throws {
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", keyPath, "--context", "note/1/body"], input: "secret")
    let opened = try TaskKeyBinary.run(
      ["open", "--key-file", keyPath, "--context", "note/2/body"], stdin: sealed.stdout)
    #expect(opened.status == 10)
    #expect(opened.stdout.isEmpty)
    #expect(opened.stderr.hasPrefix("taskkey: error: authentication failed"))
    #expect(!opened.stderr.contains("secret"))
  }

  @Test func tamperedValueIsRefused() throws {
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", keyPath], input: "secret")
    var text = sealed.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    // Swap the first payload character for another base64 letter.
    let index = text.index(text.startIndex, offsetBy: 13)
    let replacement: Character = text[index] == "A" ? "B" : "A"
    text.replaceSubrange(index...index, with: String(replacement))
    let opened = try TaskKeyBinary.run(["open", "--key-file", keyPath], input: text)
    #expect(opened.status == 10)
    #expect(opened.stdout.isEmpty)
  }

  @Test func valueFromAnotherKeyIsUnknown() throws {
    let other = home.path("other.key")
    _ = try TaskKeyBinary.run(["keygen", "--out", other])
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", other], input: "x")
    let opened = try TaskKeyBinary.run(["open", "--key-file", keyPath], stdin: sealed.stdout)
    #expect(opened.status == 11)
    #expect(opened.stderr.contains("unknown key id"))
  }

  @Test(arguments: [
    ("tc1.0000000a:not base64!", 65, "not canonical base64"),
    ("tc1.0000000a:", 65, "shorter than nonce and tag"),
    ("tc7.0000000a:AAAA", 12, "unsupported sealed-value version 'tc7'"),
  ])
  func malformedValuesNameTheirDefect(input: String, status: Int32, message: String) throws {
    let result = try TaskKeyBinary.run(["open", "--key-file", keyPath], input: input)
    #expect(result.status == status)
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains(message))
  }

  @Test func looseKeyFileIsRefused() throws {
    chmod(keyPath, 0o640)
    let result = try TaskKeyBinary.run(["seal", "--key-file", keyPath], input: "x")
    #expect(result.status == 77)
    #expect(result.stderr.contains("chmod 600"))
  }

  @Test func symlinkedKeyFileIsRefused() throws {
    let link = home.path("link.key")
    symlink(keyPath, link)
    let result = try TaskKeyBinary.run(["seal", "--key-file", link], input: "x")
    #expect(result.status == 77)
  }

  @Test func malformedKeyFileIsRefusedWithoutEchoingIt() throws {
    let path = home.path("bad.key")
    _ = FileManager.default.createFile(
      atPath: path, contents: Data("0000000a:\(String(repeating: "Z", count: 64))\n".utf8),
      attributes: [.posixPermissions: 0o600])
    let result = try TaskKeyBinary.run(["seal", "--key-file", path], input: "x")
    #expect(result.status == 65)
    #expect(result.stderr.contains("not 64 lowercase hex digits"))
    #expect(!result.stderr.contains("ZZZZ"))
  }

  @Test func missingKeyFileIsNoInput() throws {
    let result = try TaskKeyBinary.run(["seal", "--key-file", home.path("absent.key")], input: "x")
    #expect(result.status == 66)
  }

  @Test func usageErrorsExit64WithTheUsageLine() throws {
    for arguments in [
      ["seal", "unexpected"], ["seal", "--key-file", keyPath, "--bogus"], ["frobnicate"], ["open", "--context"],
    ] {
      let result = try TaskKeyBinary.run(arguments, input: "")
      #expect(result.status == 64, "\(arguments)")
      #expect(result.stderr.hasPrefix("taskkey: error: "), "\(arguments)")
      #expect(result.stderr.contains("usage: taskkey"), "\(arguments)")
    }
  }

  @Test func helpAndVersionGoToStdoutAndExitZero() throws {
    let help = try TaskKeyBinary.run(["--help"])
    #expect(help.status == 0)
    #expect(help.stdoutText.contains("OVERVIEW:"))
    #expect(help.stdoutText.contains("SUBCOMMANDS:"))
    let sealHelp = try TaskKeyBinary.run(["seal", "--help"])
    #expect(sealHelp.status == 0)
    #expect(sealHelp.stdoutText.contains("USAGE: taskkey seal"))
    #expect(sealHelp.stdoutText.contains("EXAMPLE:"))
    let version = try TaskKeyBinary.run(["--version"])
    #expect(version.status == 0)
    #expect(version.stdoutText.hasPrefix("taskkey "))
  }
}
