import Foundation
import TaskKeyTestSupport
import Testing

/// Issue 11, cases 7, 9 and 14: arguments that are not UTF-8, odd path
/// names, and the largest value `seal --exact` can write.
@Suite("Hostile arguments and sizes")
struct HostileInputTests {
  let home: TemporaryDirectory
  let keyPath: String

  init() throws {
    (home, keyPath) = try keyFileHome()
  }

  /// Case 7: `a\xff` used to be repaired to U+FFFD, so a value sealed under
  /// it opened under `a\xfe` too. Now such a context is refused with 64.
  @Test func contextThatIsNotUTF8IsRefusedNeverRepaired() throws {
    for bytes in ["a\\377", "a\\376", "a\\300", "\\355\\240\\200"] {
      let sealed = try runTaskKeyInShell(
        "echo secret | \"$0\" seal --key-file '\(keyPath)' --context \"$(printf '\(bytes)')\"")
      #expect(sealed.status == 65, "context \(bytes): \(sealed.stderr)")
      #expect(sealed.stdout.isEmpty)
      #expect(sealed.stderr.contains("not valid UTF-8"))
      let opened = try runTaskKeyInShell(
        "echo tc1.0a0b0c0d:AAAA | \"$0\" open --key-file '\(keyPath)' --context \"$(printf '\(bytes)')\"")
      #expect(opened.status == 65)
    }
    // UTF-8 contexts, also beyond ASCII, still seal and open byte for byte.
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", keyPath, "--context", "nöte/é"], input: "x")
    #expect(sealed.status == 0)
    let wrong = try TaskKeyBinary.run(["open", "--key-file", keyPath, "--context", "note/é"], stdin: sealed.stdout)
    #expect(wrong.status == 10)
    let right = try TaskKeyBinary.run(["open", "--key-file", keyPath, "--context", "nöte/é"], stdin: sealed.stdout)
    #expect(right.stdoutText == "x\n")
  }

  /// Found by the JSON-lines fuzz harness: a batch line that is not UTF-8
  /// used to be repaired and written back with other bytes. It is refused.
  @Test func batchLineThatIsNotUTF8IsRefusedNeverRepaired() throws {
    let input = Array("{\"v\": null}\n{\"v\": null, \"c".utf8) + [0xdc] + Array("\": 1}\n".utf8)
    let vault = try CLIVault()
    let result = try vault.run(["rewrap", "--field", "v"], input: input)
    #expect(result.status == 65, "\(result.stderr)")
    #expect(result.stdout.isEmpty)
    #expect(result.stderr.contains("line 2: not valid UTF-8"))
  }

  /// Case 9: a path that is not UTF-8 is refused before anything is written.
  @Test func pathThatIsNotUTF8IsRefusedAndNothingIsWritten() throws {
    let made = try runTaskKeyInShell("\"$0\" keygen --out \"$(printf 'k\\377')\"", in: home.url.path)
    #expect(made.status == 65, "\(made.stderr)")
    let names = try FileManager.default.contentsOfDirectory(atPath: home.url.path)
    #expect(names.sorted() == ["note.key"])
    let vault = try runTaskKeyInShell(
      "TASKKEY_HOME=\"$(printf 'v\\377')\" \"$0\" status", in: home.url.path)
    #expect(vault.status == 65)
    #expect(vault.stderr.contains("TASKKEY_HOME is not valid UTF-8"))
  }

  /// Case 9: one-character names, `-`, `.`, `..`, trailing slashes. Before,
  /// `backup create --out x` wrote the file and died of SIGILL (exit 132).
  @Test func outputPathsOfEveryShapeSucceedOrFailWithADocumentedCode() throws {
    let vault = try CLIVault()
    try FileManager.default.createDirectory(atPath: vault.home.path("sub"), withIntermediateDirectories: false)
    let documented: Set<Int32> = [0, 64, 66, 73, 74]
    for out in ["x", ".", "..", "sub/", "sub//", "/"] {
      for command in [["backup", "create", "--out", out], ["keygen", "--out", out]] {
        let result = try TaskKeyBinary.run(
          command, environment: ["TASKKEY_HOME": vault.directory], in: vault.home.url)
        #expect(documented.contains(result.status), "\(command): \(result.status) \(result.stderr)")
        #expect(result.status == 0 || result.stderr.hasPrefix("taskkey: error: "), "\(command)")
      }
    }
    #expect(FileManager.default.fileExists(atPath: vault.home.path("x")))
    // `-` is standard output for a backup and a bundle, refused for a key.
    let backup = try vault.run(["backup", "create", "--out", "-"])
    #expect(backup.status == 0, "\(backup.stderr)")
    #expect(Array(backup.stdout.prefix(8)) == Array("TKBACKUP".utf8))
    let restored = try TemporaryDirectory()
    let restore = try TaskKeyBinary.run(
      ["backup", "restore", "-", "--passphrase-file", vault.passphraseFile], stdin: backup.stdout,
      environment: ["TASKKEY_HOME": restored.path("keys")])
    #expect(restore.status == 0, "\(restore.stderr)")
    let key = try TaskKeyBinary.run(["keygen", "--out", "-"], in: vault.home.url)
    #expect(key.status == 64)
    #expect(key.stdout.isEmpty)
    #expect(!FileManager.default.fileExists(atPath: vault.home.path("-")))
    let keyFile = try TaskKeyBinary.run(["seal", "--key-file", "-"], input: "x")
    #expect(keyFile.status == 64)
  }

  /// Case 14: the largest plaintexts seal to 22,369,673 bytes and a newline,
  /// which `open --exact` used to refuse with 65.
  @Test(arguments: [16_777_215, 16_777_216])
  func whatSealExactWritesOpenExactReads(size: Int) throws {
    var plaintext = [UInt8](repeating: 0x61, count: size)
    plaintext[size - 1] = 0x0a
    let sealed = try TaskKeyBinary.run(["seal", "--key-file", keyPath, "--exact"], stdin: plaintext)
    #expect(sealed.status == 0, "\(sealed.stderr)")
    #expect(sealed.stdout.count == 22_369_674)
    let opened = try TaskKeyBinary.run(["open", "--key-file", keyPath, "--exact"], stdin: sealed.stdout)
    #expect(opened.status == 0, "\(opened.stderr)")
    #expect(opened.stdout == plaintext)
    let tooLarge = try TaskKeyBinary.run(
      ["seal", "--key-file", keyPath, "--exact"], stdin: [UInt8](repeating: 0x62, count: 16_777_217))
    #expect(tooLarge.status == 65)
    #expect(tooLarge.stdout.isEmpty)
  }
}
