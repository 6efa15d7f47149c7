import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@Suite("taskkey rotate, tasker rewrap, then taskkey retire checked against the database")
struct KeyRotationTests {
  @Test func rotateRewrapRetire() throws {
    let device = try TestDevice()
    for index in 1...3 {
      #expect(try device.tasker(["add", "task \(index)", "--notes", "-"], input: "note \(index)").status == 0)
    }
    #expect(try device.tasker(["page", "new", "p", "--body", "-"], input: "page body").status == 0)
    #expect(try device.tasker(["settings", "set", "attachment-encryption", "on"]).status == 0)
    #expect(try device.tasker(["attach", "add", "--task", "1", "-", "--name", "a.txt"], input: "attached").status == 0)
    let old = try device.vault().noteKeyring().primaryID.hex
    #expect(try device.tasker(["keys"]).stdoutText == "\(old)  3 notes, 1 page bodies, 1 attachments\n")

    let rotated = try device.taskkey(["rotate"])
    #expect(rotated.status == 0, "\(rotated.stderr)")
    let new = try device.vault().noteKeyring().primaryID.hex
    #expect(new != old)

    // Before rewrap, retire must refuse: the database still uses the old key.
    let values = try device.tasker(["keys", "--values"])
    #expect(values.stdoutText.split(separator: "\n").count == 4)
    let refused = try device.taskkey(["retire", old, "--input", "-", "--field", "value"], input: values.stdoutText)
    #expect(refused.status == 17, "\(refused.stderr)")
    let inUse = try device.tasker(["keys", "--check", old])
    #expect(inUse.status == 17)
    #expect(inUse.stderr.hasPrefix("tasker: error: key \(old) still seals 5 stored values\n"))

    let rewrap = try #require(try device.tasker(["rewrap", "--json"]).json() as? [String: Any])
    #expect(rewrap["rewrapped"] as? Int == 4)
    #expect(rewrap["attachments_rewrapped"] as? Int == 1)
    #expect(rewrap["primary_key_id"] as? String == new)
    let usage = try #require(try device.tasker(["keys", "--json"]).json() as? [String: Any])
    let keys = try #require(usage["keys"] as? [[String: Any]])
    #expect(keys.map { $0["key_id"] as? String } == [new])
    #expect(try device.tasker(["keys", "--check", old]).status == 0)

    let retired = try device.taskkey(
      ["retire", old, "--input", "-", "--field", "value"], input: try device.tasker(["keys", "--values"]).stdoutText)
    #expect(retired.status == 0, "\(retired.stderr)")
    #expect(try device.vault().noteKeyring().ids.map(\.hex) == [new])
    #expect(try device.tasker(["show", "2"]).stdoutText.hasSuffix("\nnote 2\n"))
    #expect(try device.tasker(["page", "show", "1"]).stdoutText.hasSuffix("\npage body\n"))
    #expect(try device.tasker(["attach", "get", "1"]).stdoutText == "attached")
  }

  @Test func aBodyOfARetiredKeyIsAnErrorNeverText() throws {
    let device = try TestDevice()
    #expect(try device.tasker(["add", "t", "--notes", "-"], input: "sealed by the old key").status == 0)
    let old = try device.vault().noteKeyring().primaryID.hex
    #expect(try device.taskkey(["rotate"]).status == 0)
    #expect(try device.taskkey(["retire", old, "--force"]).status == 0)
    let shown = try device.tasker(["show", "1"])
    #expect(shown.status == 11)
    #expect(shown.stdout.isEmpty)
    #expect(shown.stderr.contains("task/1/notes is sealed and cannot be opened on this device"))
    #expect(!shown.stderr.contains("tc1."))
    let rewrap = try device.tasker(["rewrap"])
    #expect(rewrap.status == 11, "\(rewrap.stderr)")
  }
}
