import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@testable import TaskSystem

/// `DirectoryWatch`: false while nothing changed in the watched
/// directories, true for good once anything did, each change seen by the
/// very next call (the kernel queues the event before the syscall returns).
@Suite("Directory watch: every change is seen by the next call")
struct DirectoryWatchTests {
  /// A fresh directory with a file `f` in it, and a watch of the directory
  /// made after the file.
  private func watched() throws -> (base: TemporaryDirectory, directory: String, watch: DirectoryWatch) {
    let base = try TemporaryDirectory()
    let directory = base.path("watched")
    #expect(mkdir(directory, 0o700) == 0)
    #expect(FileManager.default.createFile(atPath: directory + "/f", contents: Data("x".utf8)))
    return (base, directory, try DirectoryWatch(directories: [directory]))
  }

  @Test func nothingHappeningIsNoChangeHoweverOftenAsked() throws {
    let (base, directory, watch) = try watched()
    defer { withExtendedLifetime(base) {} }
    for _ in 0..<5 { #expect(!watch.sawChange()) }
    // Reading a file, listing the directory and changing another one are no change.
    #expect(FileManager.default.contents(atPath: directory + "/f") == Data("x".utf8))
    #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == ["f"])
    #expect(FileManager.default.createFile(atPath: base.path("elsewhere"), contents: nil))
    #expect(!watch.sawChange())
    #expect(!watch.sawChange())
  }

  @Test("each kind of change is seen at the next call and then for good", arguments: Change.allCases)
  func eachChangeIsSeenAtOnceAndForGood(change: Change) throws {
    let (base, directory, watch) = try watched()
    defer { withExtendedLifetime(base) {} }
    #expect(!watch.sawChange())
    try change.make(in: directory, outside: base.path("outside"))
    #expect(watch.sawChange(), "\(change)")
    for _ in 0..<3 { #expect(watch.sawChange(), "once true, stays true") }
  }

  @Test func anEmptyWatchedDirectoryRemovedIsAChange() throws {
    let base = try TemporaryDirectory()
    let directory = base.path("empty")
    #expect(mkdir(directory, 0o700) == 0)
    let watch = try DirectoryWatch(directories: [directory])
    #expect(!watch.sawChange())
    #expect(rmdir(directory) == 0)
    #expect(watch.sawChange())
    #expect(watch.sawChange())
  }

  @Test func aNewWatchStartsFromNothingChanged() throws {
    let (base, directory, watch) = try watched()
    defer { withExtendedLifetime(base) {} }
    #expect(FileManager.default.createFile(atPath: directory + "/g", contents: nil))
    #expect(watch.sawChange())
    let again = try DirectoryWatch(directories: [directory])
    #expect(!again.sawChange())
    #expect(unlink(directory + "/g") == 0)
    #expect(again.sawChange())
  }

  @Test func aChangeInAnyOfSeveralDirectoriesIsSeen() throws {
    let base = try TemporaryDirectory()
    let directories = ["a", "b", "c"].map { base.path($0) }
    for directory in directories { #expect(mkdir(directory, 0o700) == 0) }
    for changed in directories {
      let watch = try DirectoryWatch(directories: directories)
      #expect(!watch.sawChange())
      #expect(FileManager.default.createFile(atPath: changed + "/new", contents: nil))
      #expect(watch.sawChange(), "\(changed)")
      #expect(unlink(changed + "/new") == 0)
    }
    // The same directory named twice is watched once, and still seen.
    let twice = try DirectoryWatch(directories: [directories[0], directories[0]])
    #expect(!twice.sawChange())
    #expect(mkdir(directories[0] + "/sub", 0o700) == 0)
    #expect(twice.sawChange())
  }

  @Test func aMissingDirectoryIsRefusedNamingTheCallAndThePath() throws {
    let base = try TemporaryDirectory()
    let missing = base.path("missing")
    let existing = base.path("there")
    #expect(mkdir(existing, 0o700) == 0)
    #expect(throws: SystemError.failed(call: "inotify_add_watch", path: missing, errno: ENOENT)) {
      try DirectoryWatch(directories: [existing, missing])
    }
    // A file, or a symlink to a directory (not followed), is not a directory.
    #expect(FileManager.default.createFile(atPath: base.path("file"), contents: nil))
    #expect(symlink(existing, base.path("link")) == 0)
    for path in [base.path("file"), base.path("link")] {
      #expect(throws: SystemError.failed(call: "inotify_add_watch", path: path, errno: ENOTDIR)) {
        try DirectoryWatch(directories: [path])
      }
    }
  }
}

/// The changes a watch must see, each made in the watched directory
/// (which holds the file `f`), or to the directory itself.
enum Change: String, CaseIterable, CustomTestStringConvertible, Sendable {
  case create
  case makeDirectory
  case renameInto
  case renameOut
  case renameWithin
  case remove
  case writeInPlace
  case truncate
  case chmod
  case moveTheDirectory

  var testDescription: String { rawValue }

  func make(in directory: String, outside: String) throws {
    let file = directory + "/f"
    switch self {
    case .create:
      #expect(FileManager.default.createFile(atPath: directory + "/new", contents: nil))
    case .makeDirectory:
      #expect(mkdir(directory + "/sub", 0o700) == 0)
    case .renameInto:
      #expect(FileManager.default.createFile(atPath: outside, contents: nil))
      #expect(rename(outside, directory + "/moved") == 0)
    case .renameOut:
      #expect(rename(file, outside) == 0)
    case .renameWithin:
      #expect(rename(file, directory + "/g") == 0)
    case .remove:
      #expect(unlink(file) == 0)
    case .writeInPlace:
      let descriptor = open(file, O_WRONLY)
      #expect(descriptor >= 0)
      #expect(write(descriptor, "y", 1) == 1)
      #expect(close(descriptor) == 0)
    case .truncate:
      #expect(Glibc.truncate(file, 0) == 0)
    case .chmod:
      #expect(Glibc.chmod(file, 0o600) == 0)
    case .moveTheDirectory:
      #expect(rename(directory, outside) == 0)
    }
  }
}
