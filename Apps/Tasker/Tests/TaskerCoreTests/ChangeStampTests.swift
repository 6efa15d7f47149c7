import Foundation
import TaskCrypto
import TaskerTestSupport
import Testing

@testable import TaskerCore

/// `TaskStore.changeStamp()`, what the gate's remembered answers are kept
/// with: equal stamps of one connection must mean that nothing committed in
/// between, whoever committed.
@Suite struct ChangeStampTests {
  func twoConnections(_ directory: TemporaryDirectory) throws -> (TaskStore, TaskStore, TaskerHome) {
    let home = TaskerHome(directory: directory.path)
    let keyring = try Keyring.generate()
    let reader = try TaskStore(home: home, keys: keyring)
    try reader.addTask(TaskDraft(title: "first"))
    _ = try reader.tasks()
    return (reader, try TaskStore(home: home, keys: keyring), home)
  }

  @Test func inWALModeTheStampIsTheLogIndexHeaderAndStandsStillWithoutCommits() throws {
    let directory = try TemporaryDirectory()
    let (reader, _, _) = try twoConnections(directory)
    let stamp = try reader.changeStamp()
    guard case .logIndex(let header) = stamp else {
      Issue.record("no WAL index header was read: \(stamp)")
      return
    }
    #expect(header.count == 48)
    for _ in 0..<50 {
      _ = try reader.tasks()
      #expect(try reader.changeStamp() == stamp, "reads commit nothing")
    }
  }

  @Test func everyCommitOfAnotherConnectionMovesTheStamp() throws {
    let directory = try TemporaryDirectory()
    let (reader, writer, _) = try twoConnections(directory)
    var seen = [try reader.changeStamp()]
    for number in 0..<200 {
      try writer.addTask(TaskDraft(title: "task \(number)"))
      let stamp = try reader.changeStamp()
      #expect(stamp != seen.last, "commit \(number) was not seen")
      seen.append(stamp)
    }
  }

  @Test func theConnectionsOwnCommitsMoveItsStamp() throws {
    let directory = try TemporaryDirectory()
    let (reader, _, _) = try twoConnections(directory)
    for number in 0..<50 {
      let before = try reader.changeStamp()
      try reader.addTask(TaskDraft(title: "own \(number)"))
      #expect(try reader.changeStamp() != before)
    }
  }

  @Test func aCommitOfAnotherProcessMovesTheStamp() throws {
    let directory = try TemporaryDirectory()
    let (reader, _, home) = try twoConnections(directory)
    let before = try reader.changeStamp()
    let shell = try Binary(path: Binary.which("sqlite3")).run([
      "-batch", home.databasePath, "UPDATE tasks SET title = 'changed by the shell' WHERE id = 1",
    ])
    #expect(shell.status == 0, "\(shell.stderr)")
    #expect(try reader.changeStamp() != before)
    #expect(try reader.task(id: 1).title == "changed by the shell")
  }

  @Test func aStampOfTheOtherKindNeverEqualsOne() {
    let header = TaskStore.ChangeStamp.logIndex(Array(repeating: 0, count: 48))
    #expect(header != TaskStore.ChangeStamp.versions(others: 0, own: 0))
  }
}
