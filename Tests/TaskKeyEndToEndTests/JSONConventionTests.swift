import Foundation
import TaskKeyTestSupport
import Testing

/// The one JSON convention (docs/json-output.md, issue 21 goal 3), checked
/// on the real output of every `taskkey` command whose `--help` offers
/// `--json`. The declared top-level fields come from the page's table,
/// which the test keeps equal to the commands: a command with `--json`
/// and no row, a row with no such command, or an output with other keys
/// fails. (This target runs the binary and imports no command module, so
/// the page is where the test reads each command's `JSONShape`.)
@Suite("taskkey: one JSON convention")
struct JSONConventionTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  /// docs/json-output.md's table for `program`: command words → fields.
  static func documented(_ program: String) throws -> [[String]: [String]] {
    try JSONConventionCheck.documented(program, repository: root)
  }

  /// What in `value` breaks the page's rules (TaskKeyTestSupport's shared checker).
  static func breaks(_ value: Any, at path: String = "$") -> [String] { JSONConventionCheck.breaks(value, at: path) }

  /// The key lists of every object whose keys are not sorted.
  static func unsortedObjects(_ bytes: [UInt8]) -> [[String]] { JSONConventionCheck.unsortedObjects(bytes) }

  /// Checks one `--json` output against the convention and `fields`.
  static func check(
    _ result: ProcessResult, _ path: [String], fields: [String]?, status: Int32 = 0, sorted: Bool = true
  ) throws -> [String: Any] {
    let name = path.joined(separator: " ")
    #expect(result.status == status, "\(name): \(result.status) \(result.stderr)")
    let text = result.stdoutText
    #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1, "\(name): not one line: \(text)")
    let parsed = try JSONSerialization.jsonObject(with: Data(result.stdout), options: [.fragmentsAllowed])
    let object = try #require(parsed as? [String: Any], "\(name): the top level is not an object: \(text)")
    let declared = try #require(fields, "\(name) has no row in docs/json-output.md")
    #expect(Set(object.keys) == Set(declared) && declared.count == object.count, "\(name): \(object.keys.sorted())")
    #expect(breaks(object) == [], "\(name)")
    if sorted { #expect(unsortedObjects(result.stdout) == [], "\(name): keys not sorted") }
    return object
  }

  @Test func everyCommandWithJSONFollowsTheConvention() throws {
    let vault = try CLIVault()
    let home = vault.home
    let table = try Self.documented("taskkey")
    let lines = home.path("lines.jsonl")
    try #"{"v":"plain"}"#.appending("\n").write(toFile: lines, atomically: true, encoding: .utf8)
    let newPassphrase = home.path("new-pass")
    try writePrivate(newPassphrase, "another horse battery\n")
    var checked = Set<[String]>()
    func run(
      _ path: [String], _ rest: [String], input: String = "", home directory: String? = nil, status: Int32 = 0,
      sorted: Bool = true
    ) throws -> [String: Any] {
      let result = try TaskKeyBinary.run(
        path + rest + ["--json"], stdin: Array(input.utf8), environment: ["TASKKEY_HOME": directory ?? vault.directory])
      checked.insert(path)
      return try Self.check(result, path, fields: table[path], status: status, sorted: sorted)
    }
    let passphrase = ["--passphrase-file", vault.passphraseFile]
    _ = try run(["status"], [])
    let primary = try #require(try run(["keys"], [])["primary"] as? String)
    _ = try run(["item", "list"], [])
    _ = try run(["doctor"], [])
    _ = try run(["keygen"], ["-o", home.path("n.key")])
    _ = try run(["sync", "export"], ["-o", home.path("bundle")] + passphrase)
    _ = try run(["sync", "import"], [home.path("bundle")] + passphrase)
    _ = try run(["backup", "create"], ["-o", home.path("backup")])
    _ = try run(["backup", "restore"], [home.path("backup")] + passphrase, home: home.path("restored"))
    let minted = try TaskKeyBinary.run(
      ["mint", "--name", "bot", "--json"], environment: ["TASKKEY_HOME": vault.directory])
    checked.insert(["mint"])
    // The key is written straight from locked memory in its sorted place
    // (AssistantOutput.writeMinted).
    let record = try Self.check(minted, ["mint"], fields: table[["mint"]])
    #expect(Self.unsortedObjects(minted.stdout) == [])
    let key = try #require(record["key"] as? String)
    _ = try run(["verify"], [], input: key)
    _ = try run(["list"], [])
    _ = try run(["revoke"], [try #require(record["id"] as? String)])
    let rotated = try #require(try run(["rotate"], [])["primary"] as? String)
    _ = try run(["promote"], [primary])
    _ = try run(["seal"], ["--field", "v", "-i", lines, "-o", home.path("s1")])
    _ = try run(["rewrap"], ["--field", "v", "-i", home.path("s1"), "-o", home.path("s2")])
    _ = try run(["open"], ["--field", "v", "-i", home.path("s2"), "-o", home.path("s3")])
    _ = try run(["retire"], [rotated, "--input", home.path("s2")])
    let owner = ["--record", "attachment/1"]
    try "attached\n".write(toFile: home.path("in.txt"), atomically: true, encoding: .utf8)
    _ = try run(["attach", "seal"], [home.path("in.txt"), "-o", home.path("a1")] + owner)
    _ = try run(["attach", "open"], [home.path("a1"), "-o", home.path("a2")] + owner)
    _ = try run(["attach", "rewrap"], [home.path("a1")] + owner)
    _ = try run(["attach", "store"], [home.path("in.txt"), "-o", home.path("a3")] + owner)
    _ = try run(["attach", "setting"], [])
    _ = try run(["vectors", "check"], [Self.root.appendingPathComponent("Vectors/aes-256-gcm.json").path])
    _ = try run(
      ["passphrase"], passphrase + ["--new-passphrase-file", newPassphrase, "--accept-weak-passphrase"])
    _ = try run(["lock"], [])
    let until = try run(["unlock"], ["--for", "1h", "--passphrase-file", newPassphrase])
    #expect(until["unlocked_until"] is String, "a timed unlock names its end")
    let second = home.path("second")
    _ = try run(
      ["init"], ["--kdf", "fast-test-only", "--accept-weak-passphrase"] + passphrase + ["--locked"], home: second)

    // Pairing: join prints one object; offer is a stream of one object per event (rule 2).
    let pairing = try PairingPeer.pair(offering: vault.directory, joining: home.path("paired"))
    checked.formUnion([["pair", "offer"], ["pair", "join"]])
    _ = try Self.check(pairing.join, ["pair", "join"], fields: table[["pair", "join"]])
    #expect(pairing.offerStatus == 0, "pair offer: \(pairing.offerErrors)")
    let offerFields = Set(try #require(table[["pair", "offer"]]))
    var events: [String] = []
    for line in pairing.offerLines {
      let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
      #expect(Set(object.keys).isSubset(of: offerFields), "pair offer: \(object.keys.sorted())")
      #expect(Self.breaks(object) == [] && Self.unsortedObjects(line) == [], "pair offer")
      events.append(object["event"] as? String ?? "")
    }
    #expect(events == ["offer", "connected", "confirmed", "paired"])

    let offered = try CompletionCommandTests.commandPaths().filter { $0.options.contains("--json") }.map(\.path)
    #expect(Set(offered) == checked, "commands with --json that this test does not run, or runs without --json")
    #expect(Set(table.keys) == checked, "docs/json-output.md's taskkey rows differ from the commands")
  }

  /// A field with no value is there, as null: never left out.
  @Test func aFieldWithNoValueIsAnExplicitNull() throws {
    let vault = try CLIVault()
    let status = try vault.run(["status", "--json"]).stdoutText
    #expect(status.contains(#""lock_reason":null"#) && status.contains(#""unlocked_until":null"#), "\(status)")
    let listed = try vault.run(["mint", "--name", "bot", "--json"]).stdoutText
    for field in ["expires", "last_used", "revoked", "overlap_until"] {
      #expect(listed.contains("\"\(field)\":null"), "\(field) left out: \(listed)")
    }
    let made = try TaskKeyBinary.run(
      [
        "init", "--kdf", "fast-test-only", "--accept-weak-passphrase", "--passphrase-file", vault.passphraseFile,
        "--locked", "--json",
      ], environment: ["TASKKEY_HOME": vault.home.path("other")])
    #expect(made.stdoutText.contains(#""joined_from":null"#), "\(made.stdoutText)")
  }

  /// The rules the tests above apply refuse what they should.
  @Test func theCheckerRefusesEachBreak() {
    #expect(Self.breaks(["taskID": "1"]) != [])
    #expect(Self.breaks(["id": 42]) != [])
    #expect(Self.breaks(["items": [["created": 1_796_149_173]]]) != [])
    #expect(Self.breaks(["unlocked_until": "2026-12-01T15:04:05+01:00"]) != [])
    #expect(Self.breaks(["due": "2026-12-01T00:00:00Z"]) != [])
    #expect(Self.breaks(["id": "42", "task_id": NSNull(), "at": "2026-12-01T14:04:05Z", "due": "2026-12-03"]) == [])
    #expect(Self.unsortedObjects(Array(#"{"b":1,"a":{"y":[{"d":"}","c":2}]}}"#.utf8)) == [["d", "c"], ["b", "a"]])
    #expect(Self.unsortedObjects(Array(#"{"a":"\"b","c":["z","y"]}"#.utf8)) == [])
  }
}
