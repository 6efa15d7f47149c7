import Foundation
import Glibc
import TaskKeyTestSupport
import TaskSystemTesting
import Testing

@testable import TaskSystem

@Suite("Durable create and replace: one implementation, one policy")
struct DurableFileTests {
  func text(_ path: String) -> String? {
    (try? fileBytes(path)).map { String(decoding: $0, as: UTF8.self) }
  }

  @Test(arguments: FileStep.allCases)
  func aFaultAtAnyStepOfAReplaceLeavesTheOldOrTheNewContents(step: FileStep) throws {
    let home = try TemporaryDirectory()
    let path = home.path("file")
    let fs = FaultInjectingFileSystem()
    try fs.replace(path, contents: Array("old".utf8))
    fs.fault = { failing, _ in failing == step ? EIO : nil }
    do {
      try Array("new".utf8).withUnsafeBytes { try fs.replace(path, contents: $0, previous: home.path("file.prev")) }
    } catch let error as SystemError {
      #expect(error == .failed(call: step.rawValue, path: error.path, errno: EIO))
    }
    fs.fault = nil
    #expect(["old", "new"].contains(text(path)), "step \(step)")
    #expect(!FileStatus.exists(home.path("file.tmp")), "step \(step): temporary file left")
  }

  @Test func aFailedDirectorySyncThrowsAfterTheNewContentsAreInPlace() throws {
    let home = try TemporaryDirectory()
    let path = home.path("file")
    let fs = FaultInjectingFileSystem { step, _ in step == .fsyncDirectory ? EIO : nil }
    #expect(throws: SystemError.failed(call: "fsync(directory)", path: home.url.path, errno: EIO)) {
      try fs.replace(path, contents: Array("new".utf8))
    }
    #expect(text(path) == "new")
    #expect(throws: SystemError.failed(call: "fsync(directory)", path: home.url.path, errno: EIO)) {
      try fs.createNew(home.path("created"), contents: Array("made".utf8))
    }
    #expect(text(home.path("created")) == "made")
  }

  /// `beforeRename` runs only once the new contents are staged: a full
  /// disk fails before it, and its own failure leaves the old file and no
  /// temporary file.
  @Test func beforeRenameRunsOnlyOnceTheNewContentsAreStaged() throws {
    let home = try TemporaryDirectory()
    let path = home.path("file")
    let fs = FaultInjectingFileSystem()
    try fs.replace(path, contents: Array("old".utf8))
    struct Refused: Error {}
    for step in [FileStep.createExclusive, .write, .fsync] {
      fs.fault = { failing, _ in failing == step ? ENOSPC : nil }
      var ran = false
      #expect(throws: SystemError.self) {
        try Array("new".utf8).withUnsafeBytes { try fs.replace(path, contents: $0, beforeRename: { ran = true }) }
      }
      #expect(!ran, "step \(step)")
    }
    fs.fault = nil
    var staged: String?
    #expect(throws: Refused.self) {
      try Array("new".utf8).withUnsafeBytes {
        try fs.replace(
          path, contents: $0,
          beforeRename: {
            staged = text(home.path("file.tmp"))
            throw Refused()
          })
      }
    }
    #expect(staged == "new")
    #expect(text(path) == "old")
    #expect(!FileStatus.exists(home.path("file.tmp")))
  }

  @Test func aFailedConfirmationPutsThePreviousGenerationBack() throws {
    let home = try TemporaryDirectory()
    let path = home.path("file")
    let fs = PosixFileSystem()
    try fs.replace(path, contents: Array("old".utf8))
    struct Rejected: Error {}
    #expect(throws: Rejected.self) {
      try Array("new".utf8).withUnsafeBytes { bytes in
        try fs.replace(path, contents: bytes, previous: home.path("file.prev")) { checked in
          if checked == path { throw Rejected() }
        }
      }
    }
    #expect(text(path) == "old")
  }

  @Test func createNewIsPrivateAndNeverReplacesOrFollows() throws {
    let home = try TemporaryDirectory()
    let path = home.path("new")
    let fs = PosixFileSystem()
    try fs.createNew(path, contents: Array("one".utf8))
    #expect(try FileStatus.of(path)?.mode == 0o600)
    do {
      try fs.createNew(path, contents: Array("two".utf8))
      Issue.record("an existing file was replaced")
    } catch let error as SystemError {
      #expect(error.isAlreadyExisting)
    }
    #expect(text(path) == "one")
    symlink(home.path("target"), home.path("link"))
    #expect(throws: SystemError.self) { try fs.createNew(home.path("link"), contents: Array("x".utf8)) }
    #expect(!FileStatus.exists(home.path("target")))
  }

  @Test(arguments: [FileStep.createExclusive, .write, .fsync, .close])
  func aFailedCreateLeavesNoFile(step: FileStep) throws {
    let home = try TemporaryDirectory()
    let fs = FaultInjectingFileSystem { failing, _ in failing == step ? ENOSPC : nil }
    #expect(throws: SystemError.self) { try fs.createNew(home.path("new"), contents: Array("x".utf8)) }
    #expect(!FileStatus.exists(home.path("new")))
  }
}

@Suite("Owner-only reads, private directories, locks")
struct PrivateFileTests {
  @Test func ownerOnlyRefusesLooseModesSymlinksAndNonFiles() throws {
    let home = try TemporaryDirectory()
    let path = home.path("secret")
    try PosixFileSystem().createNew(path, contents: Array("s".utf8))
    #expect(try OpenFile.readOwnerOnly(path, limit: 10) == Array("s".utf8))
    #expect(try OpenFile.readOwnerOnly(home.path("missing"), limit: 10) == nil)
    #expect(throws: SystemError.tooLarge(path: path, byteCount: 1, limit: 0)) {
      _ = try OpenFile.readOwnerOnly(path, limit: 0)
    }
    chmod(path, 0o640)
    #expect(throws: SystemError.loosePermissions(path: path, mode: 0o640, fix: "chmod 600 '\(path)'")) {
      _ = try OpenFile.ownerOnly(path)
    }
    chmod(path, 0o600)
    symlink(path, home.path("link"))
    #expect(throws: SystemError.wrongFileType(path: home.path("link"), expected: "a regular file (it is a symlink)")) {
      _ = try OpenFile.ownerOnly(home.path("link"))
    }
    mkdir(home.path("dir"), 0o700)
    #expect(throws: SystemError.wrongFileType(path: home.path("dir"), expected: "a regular file")) {
      _ = try OpenFile.ownerOnly(home.path("dir"))
    }
  }

  @Test func privateDirectoriesAreMadeAndChecked() throws {
    let home = try TemporaryDirectory()
    let path = home.path("a/b")
    try PrivateDirectory.make(path)
    #expect(try FileStatus.of(path)?.mode == 0o700)
    #expect(try PrivateDirectory.check(path))
    #expect(try !PrivateDirectory.check(home.path("none")))
    chmod(path, 0o750)
    #expect(throws: SystemError.loosePermissions(path: path, mode: 0o750, fix: "chmod 700 '\(path)'")) {
      try PrivateDirectory.check(path)
    }
    try FileStatus.setMode(0o700, of: path, isDirectory: true)
    symlink(path, home.path("link"))
    #expect(try PrivateDirectory.check(home.path("link")))
    #expect(throws: SystemError.self) { try PrivateDirectory.check(home.path("link"), allowingSymlink: false) }
  }

  @Test func aLockFileIsCreatedPrivateAndASymlinkIsRefused() throws {
    let home = try TemporaryDirectory()
    let lock = try FileLock(path: home.path("lock"), exclusive: true)
    lock.release()
    #expect(try FileStatus.of(home.path("lock"))?.mode == 0o600)
    symlink(home.path("lock"), home.path("link"))
    #expect(throws: SystemError.wrongFileType(path: home.path("link"), expected: "a regular file (it is a symlink)")) {
      _ = try FileLock(path: home.path("link"), exclusive: false)
    }
  }

  @Test func errorsNameTheCallThePathAndTheErrno() {
    let error = SystemError.failed(call: "fsync", path: "/x", errno: EIO)
    #expect(error.description == "fsync failed on '/x': Input/output error (errno 5)")
    #expect(!error.isRefusal)
    #expect(SystemError.notOwner(path: "/x").isRefusal)
  }

  @Test func processHardeningStopsCoreDumps() throws {
    try ProcessHardening.disableCoreDumps()
    #expect(!ProcessHardening.isDumpable)
  }
}
