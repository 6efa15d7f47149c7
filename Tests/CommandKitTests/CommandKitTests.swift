import CommandKit
import Testing

/// A small program declared with the kit, to test the kit alone.
private struct Greet: RunnableCommand {
  typealias Context = Void
  static let loud = OptionSpec.flag("--loud", help: "Shout.")
  static let times = OptionSpec.value("--times", "N", .recordID, help: "How often.")
  static let spec = CommandSpec(
    name: "greet", abstract: "Greet someone.",
    arguments: [ArgumentSpec(name: "ID", kind: .liveID("person-ids"), help: "Whom.")], options: [loud, times],
    json: JSONShape(fields: ["greeted"], help: "who was greeted."))
  init(_ arguments: ParsedArguments) {}
  func run(_ context: Void) {}
}

private struct Group: RunnableCommand, CommandGroup {
  typealias Context = Void
  static let spec = CommandSpec(name: "group", abstract: "A group.")
  static let subcommands: [any CommandDeclaration.Type] = [Greet.self]
}

private let program = CommandProgram(
  name: "demo", version: "1.2.3", overview: "A demo.", commands: [Greet.self, Group.self],
  commandNames: ["greet", "group"], environment: [("DEMO_HOME", "Where.")], user: .tasker,
  manual: ManualText(title: "a demo", manual: "Demo Manual", description: ["It demos."], sections: ".SH FILES\nnone"))

@Suite("CommandKit: parser, program, references")
struct CommandKitProgramTests {
  func request(_ words: [String]) throws -> CommandProgram.Request {
    var verbosity = Verbosity.normal
    return try program.request(words, verbosity: &verbosity)
  }

  @Test func helpVersionAndMissingCommand() throws {
    guard case .print(let version) = try request(["--version"]) else {
      Issue.record("no version")
      return
    }
    #expect(version == "demo 1.2.3")
    guard case .print(let help) = try request(["--help"]) else {
      Issue.record("no help")
      return
    }
    #expect(help.contains("EXIT CODES:\n  0     success") && help.contains("DEMO_HOME"))
    #expect(!help.contains("  13    "), "the table lists only the codes this program returns")
    guard case .missingCommand = try request([]) else {
      Issue.record("no missing command")
      return
    }
  }

  @Test func typosGetTheClosestWord() {
    #expect(throws: UsageError.self) { try request(["gret"]) }
    do {
      _ = try request(["greet", "1", "--lod"])
    } catch let error as UsageError {
      #expect(error.message == "unknown option '--lod'; did you mean '--loud'?")
      #expect(error.exitCode == .usage)
    } catch { Issue.record("\(error)") }
    #expect(closestWord(to: "--tim", among: ["--times", "--loud"]) == "--times", "a cut-short option")
    #expect(closestWord(to: "--t", among: ["--times", "--tags"]) == nil, "too short and not one word")
    #expect(closestWord(to: "zzzz", among: ["greet"]) == nil)
  }

  @Test func recordIDsAreCheckedByTheParser() throws {
    for bad in ["0", "-1", "01", "+1", "1.0", "x", "99999999999999999999"] {
      #expect(throws: UsageError.self, "\(bad)") { try request(["greet", bad]) }
      #expect(throws: UsageError.self, "--times \(bad)") { try request(["greet", "1", "--times", bad]) }
    }
    guard case .run(_, let parsed) = try request(["greet", "42", "--times=3", "--json"]) else {
      Issue.record("not run")
      return
    }
    #expect(parsed.recordID(at: 0) == 42 && parsed.recordID(Greet.times) == 3 && parsed.flag(CommandSpec.jsonOption))
  }

  @Test func aGroupNeedsItsSubcommand() throws {
    #expect(throws: UsageError.self) { try request(["group"]) }
    guard case .run(let command, let parsed) = try request(["group", "greet", "7"]) else {
      Issue.record("not run")
      return
    }
    #expect(command == Greet.self && parsed.path == "demo group greet")
  }

  @Test func referenceFilesArePrintedForTheProgram() {
    let bash = ReferenceFile.bash.text(for: program)
    #expect(bash.contains("complete -F _demo demo") && bash.contains("completion words person-ids"))
    #expect(ReferenceFile.zsh.text(for: program).hasPrefix("#compdef demo"))
    #expect(ReferenceFile.fish.text(for: program).contains("complete -c demo"))
    let man = ReferenceFile.man.text(for: program)
    #expect(man.hasPrefix(".TH DEMO 1") && man.contains(".SS group greet") && man.contains(".SH FILES"))
  }
}

/// The JSON convention's writer (docs/json-output.md).
@Suite("CommandKit: JSONValueEncoder")
struct JSONValueEncoderTests {
  struct Report: Encodable {
    let keyID: String
    let byteCount: UInt64
    let lockReason: String?
    let count: Int?
    let nested: Inner
    let values: [Int8]
    struct Inner: Encodable { let myURLValue: Bool? }
  }

  @Test func snakeCaseKeysExplicitNullsSortedOutput() throws {
    let report = Report(
      keyID: "0a0b0c0d", byteCount: 7, lockReason: nil, count: nil, nested: .init(myURLValue: nil), values: [-1, 2])
    let text = try JSONValueEncoder.value(of: report).text
    #expect(
      text
        == #"{"byte_count":7,"count":null,"key_id":"0a0b0c0d","lock_reason":null,"nested":{"my_url_value":null},"values":[-1,2]}"#
    )
  }

  @Test func numbersOutsideJSONAreRefused() {
    struct Big: Encodable { let value: UInt64 }
    struct Odd: Encodable { let value: Double }
    #expect(throws: EncodingError.self) { try JSONValueEncoder.value(of: Big(value: .max)) }
    #expect(throws: EncodingError.self) { try JSONValueEncoder.value(of: Odd(value: .nan)) }
  }

  @Test func snakeCaseSpellings() {
    #expect(JSONValueEncoder.snakeCase("keyID") == "key_id")
    #expect(JSONValueEncoder.snakeCase("primaryKeyID") == "primary_key_id")
    #expect(JSONValueEncoder.snakeCase("alreadySealed") == "already_sealed")
    #expect(JSONValueEncoder.snakeCase("id") == "id")
  }
}

/// The strict reader's member ranges and refusals at depth.
@Suite("CommandKit: JSONDocument")
struct JSONDocumentTests {
  @Test func topLevelMemberRangesPointAtTheValueTokens() throws {
    let text = Array(#" {"v": "a\"b", "n": [1, {"x": null}], "c": 2} "#.utf8)
    let document = try JSONDocument(parsing: text)
    let range = try #require(document.memberRanges["v"])
    #expect(String(decoding: text[range], as: UTF8.self) == #""a\"b""#)
    #expect(String(decoding: text[try #require(document.memberRanges["n"])], as: UTF8.self) == #"[1, {"x": null}]"#)
    #expect(document.memberRanges["x"] == nil, "only top-level members")
  }

  @Test func repeatsAtAnyDepthAndBytesAfterAreRefused() {
    for bad in [#"{"a": [{"k": 1, "k": 2}]}"#, #"{"a": 1} {}"#, "\u{FEFF}{}", #"{"a": "\ud83d"}"#] {
      #expect(throws: JSONError.self, "\(bad)") { try JSONDocument(parsing: Array(bad.utf8)) }
    }
    let deep =
      String(repeating: "[", count: JSONDocument.maximumDepth + 1)
      + String(repeating: "]", count: JSONDocument.maximumDepth + 1)
    #expect(throws: JSONError.self) { try JSONDocument(parsing: Array(deep.utf8)) }
  }
}
