import Foundation
import TaskerTestSupport
import Testing

/// What this machine lets a test do.
enum Sandbox {
  static func works(_ arguments: [String]) -> Bool {
    (try? Binary(path: Binary.which(arguments[0])).run(Array(arguments.dropFirst())).status) == 0
  }

  /// `strace` is installed and may trace (ptrace is allowed).
  static let canTrace = works(["strace", "-f", "-qq", "-o", "/dev/null", "--", "/bin/true"])
  /// `unshare -n` makes an empty network namespace (as root, or through a user namespace).
  static let unshare: [String]? =
    works(["unshare", "-n", "--", "/bin/true"])
    ? ["-n"] : works(["unshare", "-r", "-n", "--", "/bin/true"]) ? ["-r", "-n"] : nil
}

@Suite("No network: tasker and taskkey open no network socket and work without a network")
struct NoNetworkTests {
  /// The main paths of both commands, in an order that works on a fresh device.
  static func steps(_ device: TestDevice, attachment: String) -> [(tool: String, arguments: [String], input: String)] {
    [
      ("taskkey", ["status"], ""),
      ("taskkey", ["lock"], ""),
      ("taskkey", ["unlock", "--passphrase-file", device.passphraseFile], ""),
      ("tasker", ["settings", "set", "encryption", "off"], ""),
      ("tasker", ["add", "Plain first", "--notes", "-"], "written before encryption"),
      ("tasker", ["encrypt"], ""),
      ("tasker", ["add", "Call the bank", "--notes", "-", "--due", "2026-12-02"], "account 1234\n"),
      ("tasker", ["list", "--json"], ""),
      ("tasker", ["show", "2"], ""),
      ("tasker", ["edit", "2", "--priority", "high"], ""),
      ("tasker", ["done", "1"], ""),
      ("tasker", ["undo", "1"], ""),
      ("tasker", ["page", "new", "Journal", "--body", "-"], "today"),
      ("tasker", ["page", "show", "1"], ""),
      ("tasker", ["attach", "add", "--task", "2", attachment], ""),
      ("tasker", ["attach", "list"], ""),
      ("tasker", ["attach", "get", "1"], ""),
      ("tasker", ["plan-context", "--json"], ""),
      // A provider set up but never asked: adding, listing and a dry run open no socket.
      ("taskkey", ["item", "set", "provider/cloud", "--device-only"], "sk-never-sent\n"),
      (
        "tasker",
        [
          "provider", "add", "cloud", "--url", "https://api.example.invalid/v1", "--model", "m", "--key-item",
          "provider/cloud",
        ], ""
      ),
      ("tasker", ["provider", "list", "--json"], ""),
      ("tasker", ["plan", "--dry-run"], ""),
      ("tasker", ["ask", "What first?", "--dry-run"], ""),
      ("tasker", ["provider", "log"], ""),
      ("taskkey", ["rotate"], ""),
      ("tasker", ["rewrap"], ""),
      ("tasker", ["keys"], ""),
      (
        "taskkey", ["sync", "export", "--out", device.root.path("bundle"), "--passphrase-file", device.passphraseFile],
        ""
      ),
    ]
  }

  func binary(_ tool: String) -> String { tool == "tasker" ? Binary.tasker.path : Binary.taskkey.path }

  @Test(.enabled(if: Sandbox.canTrace, "strace is missing or ptrace is not permitted here"))
  func straceSeesNoSocketOfANetworkFamily() throws {
    let device = try TestDevice()
    let attachment = device.root.path("scan.pdf")
    try Data("%PDF-1.7 test".utf8).write(to: URL(fileURLWithPath: attachment))
    let strace = Binary(path: Binary.which("strace"))
    var seen = [String]()
    for (index, step) in Self.steps(device, attachment: attachment).enumerated() {
      let log = device.root.path("trace-\(index).txt")
      let result = try strace.run(
        ["-f", "-qq", "-e", "trace=network", "-o", log, "--", binary(step.tool)] + step.arguments,
        stdin: Array(step.input.utf8), environment: device.environment)
      #expect(result.status == 0, "\(step.tool) \(step.arguments): \(result.stderr)")
      let calls = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").map(String.init)
        .filter { !$0.contains("+++") && !$0.contains("---") }
      seen += calls
      for call in calls {
        let opensSocket = call.contains(" socket(") || call.contains(" socketpair(")
        let local = call.contains("AF_UNIX") || call.contains("AF_LOCAL")
        #expect(!(opensSocket && !local), "\(step.tool) \(step.arguments) opened a network socket: \(call)")
        #expect(!(call.contains("sa_family=AF_") && !local), "\(step.tool) \(step.arguments) addressed: \(call)")
      }
    }
    // On Debian today the trace is empty: no network syscall of any family
    // (an AF_UNIX name-service lookup would be allowed by the checks above).
    #expect(seen.allSatisfy { !$0.contains(" socket(") || $0.contains("AF_UNIX") }, "\(seen)")
  }

  @Test(.enabled(if: Sandbox.unshare != nil, "unshare -n is not permitted here"))
  func everyCommandWorksInAnEmptyNetworkNamespace() throws {
    let device = try TestDevice()
    let attachment = device.root.path("scan.pdf")
    try Data("%PDF-1.7 test".utf8).write(to: URL(fileURLWithPath: attachment))
    let unshare = Binary(path: Binary.which("unshare"))
    let options = try #require(Sandbox.unshare)
    // The namespace really has no network: only a loopback device that is down.
    let links = try unshare.run(options + ["--", "/bin/cat", "/proc/net/dev"])
    #expect(links.status == 0)
    #expect(!links.stdoutText.contains("eth") && !links.stdoutText.contains("ens"), "\(links.stdoutText)")
    var outputs = [String]()
    for step in Self.steps(device, attachment: attachment) {
      let result = try unshare.run(
        options + ["--", binary(step.tool)] + step.arguments, stdin: Array(step.input.utf8),
        environment: device.environment)
      #expect(result.status == 0, "\(step.tool) \(step.arguments): \(result.stderr)")
      outputs.append(result.stdoutText)
    }
    #expect(outputs[8].hasSuffix("\naccount 1234\n"), "show opened the note: \(outputs[8])")
    #expect(outputs[16] == "%PDF-1.7 test", "attach get streamed the file")
    #expect(outputs[17].contains("\"title\":\"Call the bank\""))
  }
}
