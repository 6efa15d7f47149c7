import Foundation
import TaskKeyTestSupport
import Testing

/// Every exit code that `taskkey --help` documents, provoked through the
/// real binary. A new code without a scenario here fails the test.
@Suite("Every documented exit code")
struct ExitCodeTests {
  /// Codes no test can provoke without breaking the machine: 70 (a library
  /// call failed other than by authentication) and 71 (the OS refused
  /// locked memory or a tmpfs runtime directory).
  static let unreachable: Set<Int32> = [70, 71]

  func documentedCodes() throws -> Set<Int32> {
    let help = try TaskKeyBinary.run(["--help"]).stdoutText
    let table = try #require(help.components(separatedBy: "EXIT CODES:\n").last)
    return Set(table.split(separator: "\n").compactMap { Int32($0.drop { $0 == " " }.prefix { $0 != " " }) })
  }

  @Test func everyDocumentedCodeHasAScenario() throws {
    let vault = try CLIVault()
    let other = try CLIVault()
    let home = vault.home
    var seen = [Int32: String]()
    func expect(_ code: Int32, _ what: String, _ result: ProcessResult) {
      #expect(result.status == code, "\(what): \(result.stderr)")
      if code != 0 {
        #expect(result.stderr.hasPrefix("taskkey: error: "), "\(what)")
        // 'vectors check' reports on stdout by design, failures included.
        if code != 30 { #expect(result.stdout.isEmpty, "\(what) wrote to stdout") }
      }
      seen[code] = what
    }

    expect(0, "version", try vault.run(["--version"]))
    let sealed = try vault.run(["seal", "--context", "c"], text: "x").stdoutText
    var tampered = Array(sealed.trimmingCharacters(in: .newlines).utf8)
    tampered[20] = tampered[20] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
    expect(10, "tampered value", try vault.run(["open", "--context", "c"], input: tampered))
    let foreign = try other.run(["seal", "--context", "c"], text: "x").stdout
    expect(11, "value from another vault", try vault.run(["open", "--context", "c"], input: foreign))
    expect(12, "sealed-value version 2", try vault.run(["open"], text: "tc2.00000000:AAAA"))
    try writePrivate(home.path("wrong"), "not the passphrase\n")
    expect(13, "wrong passphrase", try vault.run(["unlock", "--passphrase-file", home.path("wrong")]))
    let rotatedFrom = try vault.run(["status", "--json"])
    #expect(rotatedFrom.status == 0)
    let oldKey = try vault.run(["seal"], text: "old")
    #expect(try vault.run(["rotate"]).status == 0)
    try oldKey.stdoutText.write(toFile: home.path("values"), atomically: true, encoding: .utf8)
    let oldID = String(oldKey.stdoutText.dropFirst(4).prefix(8))
    expect(17, "retire a key still in use", try vault.run(["retire", oldID, "--input", home.path("values")]))

    let key = try vault.run(["mint", "--name", "agent"]).stdoutText
    var typo = Array(key.trimmingCharacters(in: .newlines).utf8)
    typo[10] = typo[10] == UInt8(ascii: "a") ? UInt8(ascii: "b") : UInt8(ascii: "a")
    expect(20, "malformed assistant key", try vault.run(["verify"], text: "tk_short"))
    expect(21, "assistant key checksum", try vault.run(["verify"], input: typo))
    let strangerKey = try other.run(["mint", "--name", "stranger"]).stdoutText
    expect(22, "unknown assistant key", try vault.run(["verify"], text: strangerKey))
    let listed = try vault.run(["list", "--json"]).stdoutText
    let id = try #require(listed.range(of: #"tkid_[0-9a-f]{16}"#, options: .regularExpression).map { listed[$0] })
    #expect(try vault.run(["revoke", String(id)]).status == 0)
    expect(23, "revoked assistant key", try vault.run(["verify"], text: key))
    let brief = try vault.run(["mint", "--name", "brief", "--expires", "1s"]).stdoutText
    Thread.sleep(forTimeInterval: 2.1)
    expect(24, "expired assistant key", try vault.run(["verify"], text: brief))

    try #"{"format": "mystery", "version": 1}"#.write(toFile: home.path("m.json"), atomically: true, encoding: .utf8)
    expect(30, "failed vector file", try vault.run(["vectors", "check", home.path("m.json")]))
    expect(64, "unknown option", try vault.run(["status", "--bogus"]))
    try writePrivate(home.path("bad.key"), "nonsense\n")
    expect(
      65, "malformed key file", try vault.run(["open", "--key-file", home.path("bad.key")], text: "tc1.00000000:AAAA"))
    expect(66, "missing key file", try vault.run(["seal", "--key-file", home.path("absent.key")], text: "x"))
    expect(73, "keygen over an existing file", try vault.run(["keygen", "--out", home.path("bad.key")]))
    expect(74, "a directory read as a bundle", try vault.run(["sync", "import", home.path("")]))
    expect(19, "a missing item", try vault.run(["item", "get", "no/such/item"]))
    expect(
      69, "a pairing offer nobody joined",
      try vault.run(["pair", "offer", "--listen", "127.0.0.1:0", "--wait", "1s", "-q"]))
    expect(26, "a pairing peer that aborts", try PairingPeer.abortingJoin(home: home.path("joiner")))
    expect(
      41, "a weak new passphrase",
      try vault.run(
        ["passphrase", "--passphrase-file", vault.passphraseFile, "--new-passphrase-fd", "0"], text: "short\n"))
    let noTerminal = try TaskKeyBinary.run(
      ["unlock"], environment: ["TASKKEY_HOME": vault.directory], detached: true)
    expect(40, "no terminal to ask the passphrase", noTerminal)
    chmod(home.path("bad.key"), 0o644)
    expect(77, "loose key file", try vault.run(["seal", "--key-file", home.path("bad.key")], text: "x"))

    try FileManager.default.removeItem(atPath: vault.directory + "/device-only/CACHEDIR.TAG")
    let doctor = try vault.run(["doctor"])
    #expect(doctor.status == 18, "doctor with a missing backup marker: \(doctor.stderr)")
    seen[18] = "doctor found a problem it did not repair"
    #expect(try vault.run(["doctor", "--repair"]).status == 0)

    // Locked, damaged and missing vaults last: they end this vault's use.
    #expect(try vault.run(["lock"]).status == 0)
    expect(14, "locked vault", try vault.run(["item", "list"]))
    let vaultFile = vault.directory + "/vault.tkv"
    var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: vaultFile)))
    bytes[bytes.count / 2] ^= 0x01
    try Data(bytes).write(to: URL(fileURLWithPath: vaultFile))
    expect(15, "damaged vault file", try vault.run(["unlock", "--passphrase-file", vault.passphraseFile]))
    expect(16, "no vault", try TaskKeyBinary.run(["status"], environment: ["TASKKEY_HOME": home.path("none")]))

    let documented = try documentedCodes()
    #expect(documented.count >= 20)
    let missing = documented.subtracting(seen.keys).subtracting(Self.unreachable)
    #expect(missing.isEmpty, "documented exit codes without a scenario: \(missing.sorted())")
    #expect(Set(seen.keys).isSubset(of: documented), "codes seen but not documented")
  }
}
