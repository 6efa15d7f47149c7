import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@testable import TaskSystem

@Suite("Child processes and wiped files: the editor edge of tasker", .serialized)
struct ChildProcessTests {
  @Test func anExitStatusAndASignalAreTold() throws {
    #expect(try ChildProcess.run("/bin/sh", arguments: ["sh", "-c", "exit 3"], environment: []) == .exited(3))
    #expect(try ChildProcess.run("/bin/sh", arguments: ["sh", "-c", "exit 0"], environment: []) == .exited(0))
    #expect(
      try ChildProcess.run("/bin/sh", arguments: ["sh", "-c", "kill -TERM $$"], environment: []) == .signalled(SIGTERM))
  }

  /// While the child runs the parent ignores the terminal's SIGINT and
  /// SIGQUIT (the child sends them to its parent here, which lives on),
  /// the child itself has the default actions, and the parent's own
  /// actions are back afterwards.
  @Test func interruptsReachTheChildAndTheParentStays() throws {
    var before = sigaction()
    #expect(sigaction(SIGINT, nil, &before) == 0)
    let toParent = try ChildProcess.run(
      "/bin/sh", arguments: ["sh", "-c", "kill -INT $PPID; kill -QUIT $PPID; exit 0"], environment: [])
    #expect(toParent == .exited(0))
    let toChild = try ChildProcess.run("/bin/sh", arguments: ["sh", "-c", "kill -INT $$; exit 0"], environment: [])
    #expect(toChild == .signalled(SIGINT))
    var after = sigaction()
    #expect(sigaction(SIGINT, nil, &after) == 0)
    #expect(
      unsafeBitCast(after.__sigaction_handler, to: Int.self) == unsafeBitCast(before.__sigaction_handler, to: Int.self))
  }

  @Test func argumentsAndExactlyTheGivenEnvironmentReachTheChild() throws {
    let home = try TemporaryDirectory()
    let out = home.path("out")
    let script = "printf '%s|%s|%s' \"$1\" \"$GIVEN\" \"${HOME-unset}\" > \"$2\""
    let ending = try ChildProcess.run(
      "/bin/sh", arguments: ["sh", "-c", script, "sh", "one arg with spaces", out], environment: ["GIVEN=yes"])
    #expect(ending == .exited(0))
    #expect(String(decoding: try fileBytes(out), as: UTF8.self) == "one arg with spaces|yes|unset")
  }

  @Test func aMissingProgramIsAnError() {
    #expect(throws: SystemError.failed(call: "posix_spawn", path: "/nonexistent/editor", errno: ENOENT)) {
      try ChildProcess.run("/nonexistent/editor", arguments: ["editor"], environment: [])
    }
  }

  /// The zeros go into the file's own bytes: a second name of the same
  /// inode (a hard link) reads zeros afterwards, and the wiped name is gone.
  @Test func aWipedFileIsZeroedInPlaceAndRemoved() throws {
    let home = try TemporaryDirectory()
    let path = home.path("note.txt")
    let secret = Array(repeating: Array("secret note ".utf8), count: 10_000).joined()
    try Data(secret).write(to: URL(fileURLWithPath: path))
    #expect(link(path, home.path("witness")) == 0)
    try FileWipe.overwriteAndRemove(path)
    #expect(!FileManager.default.fileExists(atPath: path))
    let witness = try fileBytes(home.path("witness"))
    #expect(witness.count == secret.count)
    #expect(witness.allSatisfy { $0 == 0 })
  }

  @Test func aSymlinkIsNotFollowedAndStays() throws {
    let home = try TemporaryDirectory()
    try Data("target".utf8).write(to: URL(fileURLWithPath: home.path("target")))
    #expect(symlink(home.path("target"), home.path("link")) == 0)
    #expect(throws: SystemError.wrongFileType(path: home.path("link"), expected: "a regular file (it is a symlink)")) {
      try FileWipe.overwriteAndRemove(home.path("link"))
    }
    #expect(String(decoding: try fileBytes(home.path("target")), as: UTF8.self) == "target")
    #expect(FileStatus.exists(home.path("link")))
  }
}
