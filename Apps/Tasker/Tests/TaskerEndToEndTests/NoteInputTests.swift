import Foundation
import TaskerTestSupport
import Testing

/// Issue 22, break 7 (argv part): `--notes TEXT` put the note in
/// /proc/PID/cmdline for every local user. Note text and page bodies now
/// come from standard input (`--notes -`), a file (`--notes-file F`) or the
/// editor (`edit --notes-in-editor`, on a 0600 file in a private tmpfs
/// directory that is wiped and removed after); text on the command line is
/// refused with a hint and nothing is written.
@Suite("Note input: never on the command line")
struct NoteInputTests {
  @Test func textOnTheCommandLineIsRefusedWithAHint() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "first"]).status == 0)
    #expect(try device.tasker(["page", "new", "p"]).status == 0)
    let before = try device.sqlite(".dump").stdoutText
    for arguments in [
      ["add", "t", "--notes", "account 1234"], ["edit", "1", "--notes", "account 1234"],
      ["add", "t", "--notes=account 1234"], ["page", "new", "q", "--body", "account 1234"],
      ["page", "edit", "1", "--body", "account 1234"],
    ] {
      let refused = try device.tasker(arguments)
      #expect(refused.status == 64, "\(arguments): \(refused.stderr)")
      #expect(refused.stderr.contains("takes '-' (standard input), not the text"), "\(refused.stderr)")
      #expect(refused.stderr.contains("hint: pipe it"), "\(refused.stderr)")
      #expect(!refused.stderr.contains("1234"), "the refusal must not echo the text: \(refused.stderr)")
    }
    #expect(try device.sqlite(".dump").stdoutText == before)
  }

  @Test func notesAndBodiesFromAFile() throws {
    let device = try TestDevice()
    let file = device.root.path("note.txt")
    try Data("from a file\nsecond line\n".utf8).write(to: URL(fileURLWithPath: file))
    let added = try device.tasker(["add", "t", "--notes-file", file, "--json"])
    #expect(added.status == 0, "\(added.stderr)")
    #expect((try added.json() as? [String: Any])?["notes"] as? String == "from a file\nsecond line")
    let page = try device.tasker(["page", "new", "p", "--body-file", file, "--json"])
    #expect((try page.json() as? [String: Any])?["body"] as? String == "from a file\nsecond line")
    let missing = try device.tasker(["edit", "1", "--notes-file", device.root.path("absent")])
    #expect(missing.status == 66, "\(missing.stderr)")
    let both = try device.tasker(["edit", "1", "--notes", "-", "--notes-file", file])
    #expect(both.status == 64, "\(both.stderr)")
    #expect(try device.tasker(["add", "t", "--notes-in-editor"]).status == 64, "the editor is for edit")
  }

  /// The editor sees a 0600 file in a 0700 directory on a tmpfs holding the
  /// current note; what it saves becomes the note; afterwards the file and
  /// its directory are gone. Its command line holds only the path.
  @Test func editInTheEditorUsesAPrivateTmpfsFileAndWipesIt() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t", "--notes", "-"], input: "the old note").status == 0)
    let log = device.root.path("editor.log")
    let editor = device.root.path("editor.sh")
    let script = """
      #!/bin/sh
      f="$1"
      { stat -c '%a' "$f"; stat -c '%a' "$(dirname "$f")"; stat -f -c '%T' "$f"; echo "$f"; cat "$f"; } > '\(log)'
      tr '\\0' ' ' < /proc/$$/cmdline >> '\(log)'
      printf 'the new note\\n' > "$f"
      echo swap > "$(dirname "$f")/.body.txt.swp"
      """
    try Data(script.utf8).write(to: URL(fileURLWithPath: editor))
    try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: editor)
    var environment = device.environment
    environment["EDITOR"] = editor
    let edited = try Binary.tasker.run(["edit", "1", "--notes-in-editor", "--json"], environment: environment)
    #expect(edited.status == 0, "\(edited.stderr)")
    #expect((try edited.json() as? [String: Any])?["notes"] as? String == "the new note")
    let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
    #expect(lines.count >= 6, "\(lines)")
    #expect(lines.first == "600")
    #expect(lines.dropFirst().first == "700")
    #expect(lines.dropFirst(2).first == "tmpfs")
    let path = lines.count > 3 ? lines[3] : ""
    #expect(lines.dropFirst(4).first == "the old note")
    #expect(!lines.last!.contains("old note"), "the editor's command line: \(lines.last!)")
    #expect(!FileManager.default.fileExists(atPath: path), "\(path) left behind")
    #expect(!FileManager.default.fileExists(atPath: (path as NSString).deletingLastPathComponent))
  }

  @Test func anEditorThatFailsChangesNothing() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t", "--notes", "-"], input: "kept").status == 0)
    var environment = device.environment
    environment["VISUAL"] = "false"
    let failed = try Binary.tasker.run(["edit", "1", "--notes-in-editor"], environment: environment)
    #expect(failed.status == 69, "\(failed.stderr)")
    #expect(failed.stderr.contains("the editor 'false' exited with status 1; nothing was changed"), "\(failed.stderr)")
    #expect((try device.tasker(["show", "1", "--json"]).json() as? [String: Any])?["notes"] as? String == "kept")
  }
}
