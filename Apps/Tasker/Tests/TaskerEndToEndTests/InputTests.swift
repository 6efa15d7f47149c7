import Foundation
import TaskerTestSupport
import Testing

/// Issue 22, break 8: what comes in is refused unless it is UTF-8, what
/// goes out to a terminal has its control characters made visible, a
/// schema version no Tasker writes is an error instead of a crash, and
/// `show` on a locked vault prints the plain fields.
@Suite("Input and output: UTF-8 refused when invalid, control characters made visible")
struct InputTests {
  /// ESC with a CSI and an OSC sequence, BEL, CR, the line and paragraph
  /// separators and every bidi override and isolate.
  static let hostile =
    "A\u{1B}[2J\u{1B}]0;owned\u{07}B\rC\u{2028}D\u{2029}E\u{202A}\u{202B}\u{202C}\u{202D}\u{202E}F"
    + "\u{2066}\u{2067}\u{2068}\u{2069}G"
  /// How `hostile` prints.
  static let visible =
    "A\\u{1B}[2J\\u{1B}]0;owned\\u{7}B\\rC\\u{2028}D\\u{2029}E\\u{202A}\\u{202B}\\u{202C}\\u{202D}\\u{202E}F"
    + "\\u{2066}\\u{2067}\\u{2068}\\u{2069}G"

  /// The scalars of `text` a terminal would act on (newline and tab aside).
  static func rawControls(_ text: String) -> [UInt32] {
    text.unicodeScalars.map(\.value).filter { value in
      (value < 0x20 && value != 0x0A && value != 0x09) || (0x7F...0x9F).contains(value)
        || [0x2028, 0x2029, 0x061C, 0x200E, 0x200F].contains(value) || (0x202A...0x202E).contains(value)
        || (0x2066...0x2069).contains(value)
    }
  }

  /// Runs `tasker` through /bin/sh, so arguments and the environment can
  /// hold bytes that are not UTF-8 (`printf '\377'`), which Foundation's
  /// Process cannot pass.
  static func shell(_ device: TestDevice, _ script: String, input: String = "") throws -> ProcessResult {
    try Binary(path: "/bin/sh").run(
      ["-c", script, Binary.tasker.path], stdin: Array(input.utf8), environment: device.environment)
  }

  static func expectRefusedAsInvalidUTF8(_ result: ProcessResult, _ what: String) {
    #expect(result.status == 65, "\(what): \(result.status) \(result.stderr)")
    #expect(result.stderr.contains("is not valid UTF-8"), "\(what): \(result.stderr)")
    #expect(result.stdout.isEmpty, "\(what)")
  }

  @Test func invalidUTF8IsRefusedEverywhereAndNothingIsWritten() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "first"]).status == 0)
    let before = try device.sqlite(".dump").stdoutText
    let bad = "\"$(printf 'caf\\351')\""
    for (what, script) in [
      ("title argument", "exec \"$0\" add \(bad)"),
      ("--title", "exec \"$0\" edit 1 --title \(bad)"),
      ("--contexts", "exec \"$0\" edit 1 --contexts \(bad)"),
      ("--search", "exec \"$0\" list --search \(bad)"),
      ("notes on standard input", "printf 'caf\\351' | \"$0\" edit 1 --notes -"),
      ("page body on standard input", "printf 'caf\\351' | \"$0\" page new p --body -"),
      (
        "--notes-file",
        "printf 'caf\\351' > '\(device.root.path("bad.txt"))'; exec \"$0\" add t --notes-file '\(device.root.path("bad.txt"))'"
      ),
      ("TASKER_HOME", "TASKER_HOME=\(bad) exec \"$0\" list"),
      ("TASKKEY_HOME", "TASKKEY_HOME=\(bad) exec \"$0\" show 1"),
    ] {
      Self.expectRefusedAsInvalidUTF8(try Self.shell(device, script), what)
    }
    #expect(try device.sqlite(".dump").stdoutText == before)
    #expect(try device.tasker(["show", "1"]).stdoutText.hasPrefix("Task 1: first\n"))
  }

  @Test func everyPrinterMakesControlCharactersVisibleAndJSONStaysExact() throws {
    let device = try TestDevice()
    let added = try device.tasker(
      ["add", Self.hostile, "--contexts", Self.hostile, "--notes", "-"], input: Self.hostile)
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stdoutText == "Added task 1: \(Self.visible)\n")
    let page = try device.tasker(["page", "new", Self.hostile, "--body", "-"], input: Self.hostile + "\nline two")
    #expect(page.stdoutText == "Added page 1: \(Self.visible)\n")
    let file = device.root.path("a.txt")
    try Data("x".utf8).write(to: URL(fileURLWithPath: file))
    #expect(try device.tasker(["attach", "add", "--task", "1", file]).status == 0)
    // `attach add` refuses such a name; a database writer can still put one there.
    let named = try device.sqlite(
      "UPDATE attachments SET name = CAST(X'\(Array(Self.hostile.utf8).map { String(format: "%02X", $0) }.joined())' AS TEXT)"
    )
    #expect(named.status == 0, "\(named.stderr)")

    for arguments in [
      ["list"], ["show", "1"], ["page", "show", "1"], ["page", "list"], ["plan-context"], ["attach", "list"],
      ["edit", "1", "--priority", "high"],
    ] {
      let result = try device.tasker(arguments)
      #expect(result.status == 0, "\(arguments): \(result.stderr)")
      #expect(Self.rawControls(result.stdoutText).isEmpty, "\(arguments): \(result.stdoutText.debugDescription)")
      #expect(result.stdoutText.contains(Self.visible), "\(arguments): \(result.stdoutText.debugDescription)")
    }
    // A title is one field: its newline is made visible, a note keeps its lines.
    #expect(try device.tasker(["add", "two\nlines"]).stdoutText == "Added task 2: two\\nlines\n")
    #expect(
      try device.tasker(["page", "show", "1"]).stdoutText.hasSuffix(
        "\\u{202D}\\u{202E}F\\u{2066}\\u{2067}\\u{2068}\\u{2069}G\nline two\n"))

    // JSON is exact: the writer escapes, nothing is changed.
    let shown = try #require(try device.tasker(["show", "1", "--json"]).json() as? [String: Any])
    #expect(shown["title"] as? String == Self.hostile)
    #expect(shown["notes"] as? String == Self.hostile)
    #expect(shown["contexts"] as? String == Self.hostile)

    // An error that echoes a refused value shows it visibly too.
    let refused = try device.tasker(["show", "1\u{1B}[2J"])
    #expect(refused.status == 64)
    #expect(Self.rawControls(refused.stderr).isEmpty, "\(refused.stderr.debugDescription)")
    #expect(refused.stderr.contains("'1\\u{1B}[2J'"), "\(refused.stderr)")
  }

  /// An assistant's title reaches `receipts` (written by the gate) and a
  /// database writer's text reaches `approvals list`: both print it visibly,
  /// so a row cannot be made to read "add task" while it deletes.
  @Test func receiptsApprovalsAndGateSettingsAreMadeVisible() throws {
    let device = try TestDevice()
    let title = Self.hostile.unicodeScalars.map {
      $0.value < 0x80 && $0.value >= 0x20 ? String($0) : String(format: "\\u%04x", $0.value)
    }.joined()
    let session =
      [
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        #"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add_task","arguments":{"title":"\#(title)"}}}"#,
      ].joined(separator: "\n") + "\n"
    let served = try device.tasker(["mcp"], input: session)
    #expect(served.status == 0, "\(served.stderr)")
    let receipts = try device.tasker(["receipts"])
    #expect(receipts.status == 0, "\(receipts.stderr)")
    #expect(Self.rawControls(receipts.stdoutText).isEmpty, "\(receipts.stdoutText.debugDescription)")
    #expect(receipts.stdoutText.contains(Self.visible), "\(receipts.stdoutText.debugDescription)")
    // JSON stays exact: the writer escapes the controls, the value is the title.
    let json = try device.tasker(["receipts", "--json"])
    #expect(!json.stdout.contains(0x1B))
    let rows = try #require((try json.json() as? [String: Any])?["receipts"] as? [[String: Any]])
    #expect((rows.first?["summary"] as? String)?.contains(Self.hostile) == true, "\(rows)")

    let forged = try device.sqlite(
      """
      INSERT INTO gate_approvals (at, key_id, assistant, tool, arguments, reason, summary)
      VALUES (0, 'tkid_0123456789abcdef', 'helper', 'delete_task', '', 'quiet-hours',
        'delete task 1' || char(13) || 'add task ''milk''' || char(27) || '[K');
      INSERT INTO settings (name, value) VALUES ('gate.quiet-hours', '22:00' || char(27) || ']0;x' || char(7));
      """)
    #expect(forged.status == 0, "\(forged.stderr)")
    let approvals = try device.tasker(["approvals", "list"])
    #expect(Self.rawControls(approvals.stdoutText).isEmpty, "\(approvals.stdoutText.debugDescription)")
    #expect(approvals.stdoutText.contains("delete task 1\\radd task 'milk'\\u{1B}[K"), "\(approvals.stdoutText)")
    let gate = try device.tasker(["gate", "show"])
    #expect(Self.rawControls(gate.stdoutText + gate.stderr).isEmpty, "\(gate.stdoutText.debugDescription)")
  }

  /// `pragma user_version=-1` (or any value no Tasker writes) made every
  /// command die with SIGILL (exit 132). Now it is a damaged or too-new
  /// database with its documented code, and nothing is changed.
  @Test(arguments: [(-1, 52), (-2_147_483_648, 52), (2_147_483_647, 50), (99, 50)])
  func aSchemaVersionOutOfRangeIsAnErrorNotACrash(version: Int, code: Int32) throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "first"]).status == 0)
    #expect(try device.sqlite("PRAGMA user_version = \(version)").status == 0)
    for arguments in [["list"], ["show", "1"], ["add", "x"], ["done", "1"], ["receipts"]] {
      let result = try device.tasker(arguments)
      #expect(result.status == code, "\(arguments) at \(version): \(result.status) \(result.stderr)")
      #expect(result.stderr.contains("schema version \(version)"), "\(result.stderr)")
    }
    #expect(try device.sqlite("PRAGMA user_version").stdoutText == "\(version)\n")
  }

  /// With the vault locked, `show` printed nothing. It now prints the plain
  /// fields and a line saying the notes are locked, and exits 14 so a
  /// script can tell; `--json` gives the fields and `"notesLocked": true`.
  @Test func showOnALockedVaultPrintsThePlainFields() throws {
    let device = try TestDevice()
    #expect(
      try device.tasker(["add", "Call the bank", "--due", "2026-12-02", "--notes", "-"], input: "pin 4321").status == 0)
    #expect(try device.taskkey(["lock"]).status == 0)
    let shown = try device.tasker(["show", "1"])
    #expect(shown.status == 14, "\(shown.stderr)")
    #expect(shown.stdoutText.hasPrefix("Task 1: Call the bank\nStatus:    open\nDue:       2026-12-02"))
    #expect(shown.stdoutText.contains("\nCreated:   20"), "show gives the creation time, local")
    #expect(shown.stdoutText.hasSuffix("\nNotes:     locked (sealed; run 'taskkey unlock' to read them)\n"))
    #expect(shown.stderr.contains("the TaskKey vault is locked"))
    #expect(!shown.stdoutText.contains("pin"))
    let json = try device.tasker(["show", "1", "--json"])
    #expect(json.status == 14)
    let fields = try #require(try json.json() as? [String: Any])
    #expect(fields["title"] as? String == "Call the bank")
    #expect(fields["notes_locked"] as? Bool == true)
    #expect(fields["notes"] is NSNull, "locked notes are an explicit null")
    // A task without a sealed note needs no key: exit 0, as before.
    #expect(try device.tasker(["add", "plain"]).status == 0)
    #expect(try device.tasker(["show", "2"]).status == 0)
  }
}
