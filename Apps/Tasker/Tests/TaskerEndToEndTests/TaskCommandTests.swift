import Foundation
import TaskerTestSupport
import Testing

@Suite("tasker: task and page commands through the built binary")
struct TaskCommandTests {
  @Test func addListShowRoundTrip() throws {
    let device = try TestDevice()
    let added = try device.tasker(
      ["add", "Buy milk", "--notes", "-", "--due", "2099-12-03", "--priority", "high"], input: "two litres\n")
    #expect(added.status == 0, "\(added.stderr)")
    #expect(added.stdoutText == "Added task 1: Buy milk\n")
    let listed = try device.tasker(["list"])
    #expect(listed.stdoutText == "1\t[ ] Buy milk  due 2099-12-03  !high\n")
    let shown = try device.tasker(["show", "1"])
    #expect(shown.status == 0, "\(shown.stderr)")
    #expect(shown.stdoutText.hasSuffix("\ntwo litres\n"), "\(shown.stdoutText)")
  }

  @Test func jsonOutputAndBodiesFromStandardInput() throws {
    let device = try TestDevice()
    let added = try device.tasker(
      ["add", "Report", "--notes", "-", "--estimate", "45", "--energy", "low", "--contexts", "@work", "--json"],
      input: "line one\nline two\n")
    #expect(added.status == 0, "\(added.stderr)")
    let task = try #require(try added.json() as? [String: Any])
    #expect(task["notes"] as? String == "line one\nline two")
    #expect(task["estimate_minutes"] as? Int == 45)
    #expect(task["energy"] as? String == "low")
    #expect(task["contexts"] as? String == "@work")
    #expect(task["status"] as? String == "open")

    let edited = try device.tasker(["edit", "1", "--title", "Final report", "--energy", "none", "--json"])
    let after = try #require(try edited.json() as? [String: Any])
    #expect(after["title"] as? String == "Final report")
    #expect(after["energy"] is NSNull, "a field without a value is an explicit null")
    #expect(after["notes"] as? String == "line one\nline two")

    #expect(try device.tasker(["done", "1"]).stdoutText == "Completed task 1.\n")
    #expect(try device.tasker(["list", "--json"]).stdoutText == #"{"pending_approvals":0,"tasks":[]}"# + "\n")
    let listed = try #require(try device.tasker(["list", "--done", "--json"]).json() as? [String: Any])
    let done = try #require(listed["tasks"] as? [[String: Any]])
    #expect(done.map { $0["id"] as? String } == ["1"], "ids are strings")
    #expect(try device.tasker(["undo", "1"]).status == 0)
    #expect(try device.tasker(["list", "--search", "final"]).stdoutText.hasPrefix("1\t[ ] Final report"))

    let page = try device.tasker(["page", "new", "Ideas", "--body", "-", "--json"], input: "from stdin\n")
    #expect(page.status == 0, "\(page.stderr)")
    #expect(try device.tasker(["page", "edit", "1", "--body", "-"], input: "changed").status == 0)
    let shown = try #require(try device.tasker(["page", "show", "1", "--json"]).json() as? [String: Any])
    #expect(shown["body"] as? String == "changed")
    #expect(try device.tasker(["page", "list"]).stdoutText == "1\tIdeas\n")

    #expect(try device.tasker(["delete", "1"]).stdoutText.hasPrefix("Deleted task 1 (undo: tasker undo r"))
    let missing = try device.tasker(["show", "1"])
    #expect(missing.status == 19)
    #expect(
      missing.stderr
        == "tasker: error: no task with id 1\nhint: run 'tasker list' (or 'tasker page list') to see the ids\n")
  }

  @Test func theDatabaseHoldsCiphertextForBodiesAndPlainTitles() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Dentist", "--notes", "-"], input: "tooth at the back hurts").status == 0)
    #expect(try device.tasker(["page", "new", "Diary", "--body", "-"], input: "a private day").status == 0)
    let keyID = try device.vault().noteKeyring().primaryID.hex
    let rows = try device.sqlite("SELECT title, notes FROM tasks; SELECT title, body FROM pages;")
    #expect(rows.status == 0, "\(rows.stderr)")
    let lines = rows.stdoutText.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(lines[0].hasPrefix("Dentist|tc1.\(keyID):"))
    #expect(lines[1].hasPrefix("Diary|tc1.\(keyID):"))
    // The whole file, WAL included, never holds the plaintext.
    let dump = try device.sqlite(".dump")
    #expect(!dump.stdoutText.contains("tooth"))
    #expect(!dump.stdoutText.contains("private day"))
    #expect(dump.stdoutText.contains("Dentist"))
  }

  @Test func aLockedVaultIsAClearErrorAndNothingIsWritten() throws {
    let device = try TestDevice(unlock: false)
    #expect(try device.tasker(["add", "first"]).status == 0, "a task without notes needs no key")
    let before = try device.sqlite(".dump").stdoutText
    for arguments in [
      ["add", "second", "--notes", "-"], ["edit", "1", "--notes", "-"], ["page", "new", "p", "--body", "-"],
      ["encrypt"],
    ] {
      let refused = try device.tasker(arguments, input: "secret")
      #expect(refused.status == 14, "\(arguments)")
      #expect(refused.stderr.contains("the TaskKey vault is locked"))
      #expect(refused.stderr.hasSuffix("hint: run 'taskkey unlock'\n"))
      #expect(refused.stdout.isEmpty)
    }
    #expect(try device.sqlite(".dump").stdoutText == before)
  }

  @Test func usageErrorsExit64AndTouchNothing() throws {
    let device = try TestDevice()
    for arguments in [
      ["add"], ["add", "t", "--due", "2026-13-01"], ["add", "t", "--priority", "urgent"], ["show", "x"],
      ["edit", "1"], ["list", "--done", "--all"], ["frobnicate"], ["encrypt", "--batch", "0"],
      ["page", "new"], ["settings", "set", "encryption", "maybe"], ["plan-context", "--today", "soon"],
    ] {
      let result = try device.tasker(arguments)
      #expect(result.status == 64, "\(arguments): \(result.stderr)")
      #expect(result.stderr.hasPrefix("tasker: error: "), "\(arguments)")
    }
    #expect(!FileManager.default.fileExists(atPath: device.home.databasePath))
    let help = try device.tasker(["--help"])
    #expect(help.status == 0)
    #expect(help.stdoutText.hasPrefix("OVERVIEW: "))
    #expect(help.stdoutText.contains("\nEXIT CODES:\n"))
  }
}
