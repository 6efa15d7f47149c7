import Foundation
import TaskerTestSupport
import Testing

/// What a new user missed (issue 21, goal 5), through the built binary:
/// relative due dates, overdue marks, page delete, attach remove and
/// ranges, doctor, an empty list on a new home, the approvals notice and
/// the version.
@Suite("tasker daily use")
struct DailyUseCommandTests {
  /// The local date `days` from today, as `date` prints it.
  static func localDate(_ days: Int) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/date")
    process.arguments = ["-d", "\(days) days", "+%Y-%m-%d"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    process.waitUntilExit()
    return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  @Test func relativeDueDatesAreLocalAndOverdueIsMarked() throws {
    let device = try TestDevice()
    let added = try device.tasker(["add", "Call", "--due", "tomorrow", "--json"])
    #expect(added.status == 0, "\(added.stderr)")
    let task = try #require(try added.json() as? [String: Any])
    #expect(task["due"] as? String == (try Self.localDate(1)))
    #expect(task["overdue"] as? Bool == false)
    #expect(try device.tasker(["add", "Late", "--due", "2001-02-03"]).status == 0)
    #expect(try device.tasker(["add", "Soon", "--due", "+2w"]).status == 0)
    let listed = try device.tasker(["list"])
    #expect(listed.stdoutText.contains("Late  OVERDUE since 2001-02-03"), "\(listed.stdoutText)")
    #expect(listed.stdoutText.contains("Soon  due \(try Self.localDate(14))"), "\(listed.stdoutText)")
    #expect(try device.tasker(["show", "2"]).stdoutText.contains("Due:       2001-02-03 (overdue)"))
    let refused = try device.tasker(["add", "X", "--due", "someday"])
    #expect(refused.status == 64)
    #expect(refused.stderr.contains("tomorrow"), "the refusal lists the accepted forms: \(refused.stderr)")
    #expect(try device.tasker(["list", "--json"]).stdoutText.contains(#""title":"Call""#))
  }

  @Test func aNewHomeListsNothingAndExitsZero() throws {
    let device = try TestDevice()
    for command in [["list"], ["page", "list"], ["attach", "list"], ["receipts"], ["approvals", "list"]] {
      let result = try device.tasker(command)
      #expect(result.status == 0, "\(command): \(result.stderr)")
      #expect(result.stdout.isEmpty, "\(command)")
    }
    #expect(!FileManager.default.fileExists(atPath: device.root.path("tasker/tasker.db")), "nothing was created")
  }

  @Test func pageDeleteAndAttachRemoveAndRanges() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["page", "new", "Agenda", "--body", "-"], input: "first\n").status == 0)
    let file = device.root.path("data.txt")
    try Data("0123456789abcdef".utf8).write(to: URL(fileURLWithPath: file))
    #expect(try device.tasker(["attach", "add", "--page", "1", file]).status == 0)
    #expect(try device.tasker(["add", "Task"]).status == 0)
    #expect(try device.tasker(["attach", "add", "--task", "1", file]).status == 0)
    #expect(try device.tasker(["attach", "get", "2", "--range", "2-5"]).stdoutText == "2345")
    #expect(try device.tasker(["attach", "get", "2", "--range", "10-"]).stdoutText == "abcdef")
    let past = try device.tasker(["attach", "get", "2", "--range", "10-99"])
    #expect(past.status == 65, "a range past the end is refused, never cut short: \(past.stderr)")
    #expect(past.stdout.isEmpty)
    #expect(try device.tasker(["attach", "get", "2", "--range", "5-3"]).status == 64)
    let deleted = try device.tasker(["page", "delete", "1", "--json"])
    #expect(deleted.status == 0, "\(deleted.stderr)")
    let receipt = try #require((try deleted.json() as? [String: Any])?["receipt"] as? String)
    #expect(deleted.stdoutText == #"{"deleted":"1","receipt":""# + receipt + #""}"# + "\n")
    #expect(try device.tasker(["page", "show", "1"]).status == 19)
    #expect(try device.tasker(["undo", receipt]).status == 0)
    #expect(try device.tasker(["page", "show", "1"]).stdoutText == "Page 1: Agenda\n\nfirst\n", "restored whole")
    #expect(try device.tasker(["attach", "get", "1"]).stdoutText == "0123456789abcdef", "with its attachment")
    #expect(try device.tasker(["attach", "remove", "2"]).status == 0)
    #expect(try device.tasker(["attach", "list", "--task", "1"]).stdout.isEmpty)
    #expect(try device.tasker(["attach", "remove", "2"]).status == 19)
  }

  @Test func yourOwnDeletesAndEditsAreUndoneFromTheirReceipts() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Call the bank", "--notes", "-"], input: "pin 4321").status == 0)
    let edited = try device.tasker(["edit", "1", "--title", "Call the clinic"])
    #expect(edited.status == 0, "\(edited.stderr)")
    /// `r12` out of `… (undo: tasker undo r12)…`.
    func receipt(_ text: String) throws -> String {
      let after = try #require(text.components(separatedBy: "tasker undo ").last)
      return String(after.prefix { $0 != ")" })
    }
    let editReceipt = try receipt(edited.stdoutText)
    let deleted = try device.tasker(["delete", "1"])
    let deleteReceipt = try receipt(deleted.stdoutText)
    #expect(deleted.stdoutText == "Deleted task 1 (undo: tasker undo \(deleteReceipt)).\n")
    #expect(try device.tasker(["show", "1"]).status == 19)
    #expect(try device.tasker(["undo", deleteReceipt]).status == 0)
    #expect(try device.tasker(["show", "1"]).stdoutText.hasSuffix("\npin 4321\n"), "the sealed notes come back")
    #expect(try device.tasker(["undo", editReceipt]).status == 0)
    #expect(try device.tasker(["show", "1"]).stdoutText.hasPrefix("Task 1: Call the bank\n"))
    #expect(try device.tasker(["undo", deleteReceipt]).status == 53, "a receipt is undone at most once")
    #expect(try device.tasker(["delete", "1"]).status == 0)
    let purged = try device.tasker(["undo", "--purge", "--json"])
    #expect(purged.status == 0, "\(purged.stderr)")
    #expect((try purged.json() as? [String: Any])?["purged"] as? Int ?? 0 >= 1)
    #expect(!(try device.storedNotes().values.contains { !$0.isEmpty }), "no kept note is left")
  }

  @Test func doctorReportsAndExits18OnlyOnAnError() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "Task", "--notes", "-"], input: "sealed").status == 0)
    let healthy = try device.tasker(["doctor", "--json"])
    #expect(healthy.status == 0, "\(healthy.stdoutText) \(healthy.stderr)")
    let report = try #require(try healthy.json() as? [String: Any])
    #expect(report["healthy"] as? Bool == true)
    #expect((report["encryption"] as? [String: Any])?["sealed_notes"] as? Int == 1)
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o644], ofItemAtPath: device.root.path("tasker/tasker.db"))
    let loose = try device.tasker(["doctor"])
    #expect(loose.status == 18, "\(loose.stdoutText)")
    #expect(loose.stdoutText.contains("error"), "\(loose.stdoutText)")
  }

  @Test func versionIsTheGatesServerVersion() throws {
    let device = try TestDevice()
    let version = try device.tasker(["--version"]).stdoutText
    let session =
      [
        #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
      ].joined(separator: "\n") + "\n"
    let served = try device.tasker(["mcp"], input: session)
    let reply = try #require(
      try JSONSerialization.jsonObject(with: Data(served.stdout.split(separator: 0x0a)[0])) as? [String: Any])
    let info = try #require((reply["result"] as? [String: Any])?["serverInfo"] as? [String: Any])
    #expect(version == "tasker \(info["version"] as? String ?? "?")\n")
  }
}
