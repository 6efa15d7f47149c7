import Foundation
import Glibc
import TaskKeyTestSupport
import Testing

@testable import TaskSystem

/// Issue 11, case 3: a squatter in the shared tmpfs used to make every
/// unlock fail. The session-key directory routes around it.
@Suite("Runtime directory: squatters are routed around, never obeyed")
struct RuntimeDirectoryTests {
  @Test func aDirectoryOfAnotherUserIsPassedOverAndEveryCallAgreesOnTheNewOne() throws {
    let base = try TemporaryDirectory()
    let squat = base.path("taskkey-1000")
    #expect(mkdir(squat, 0o777) == 0)
    #expect(chown(squat, 65534, 65534) == 0)
    let chosen = try RuntimeDirectory.privateDirectory(in: base.url.path, name: "taskkey-1000")
    #expect(chosen != squat)
    #expect(chosen.hasPrefix(squat + "."))
    #expect(RuntimeDirectory.isPrivateDirectory(chosen))
    #expect(try RuntimeDirectory.privateDirectory(in: base.url.path, name: "taskkey-1000") == chosen)
  }

  @Test func aSymlinkOrAFileIsPassedOverToo() throws {
    for make in [
      { (path: String) in _ = symlink("/tmp", path) },
      { (path: String) in _ = FileManager.default.createFile(atPath: path, contents: nil) },
    ] {
      let base = try TemporaryDirectory()
      make(base.path("taskkey-7"))
      let chosen = try RuntimeDirectory.privateDirectory(in: base.url.path, name: "taskkey-7")
      #expect(chosen.hasPrefix(base.path("taskkey-7.")))
      #expect(RuntimeDirectory.isPrivateDirectory(chosen))
    }
  }

  @Test func theUsersOwnPrivateDirectoryIsUsedAsItIs() throws {
    let base = try TemporaryDirectory()
    #expect(try RuntimeDirectory.privateDirectory(in: base.url.path, name: "taskkey-5") == base.path("taskkey-5"))
    #expect(try RuntimeDirectory.privateDirectory(in: base.url.path, name: "taskkey-5") == base.path("taskkey-5"))
  }
}
