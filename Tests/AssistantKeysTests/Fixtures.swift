import Foundation
import TaskCrypto
import TaskKeyTestSupport
import TaskSystem

@testable import AssistantKeys

/// A clock that tests move by hand.
final class TestClock: @unchecked Sendable {
  var now = Date(timeIntervalSince1970: 1_800_000_000)

  func advance(seconds: Int64) { now += TimeInterval(seconds) }
}

/// A throwaway registry directory with its integrity key and a test clock.
final class RegistryFixture {
  let home: TemporaryDirectory
  let key: SymmetricKey
  let clock = TestClock()
  let fileSystem = FaultInjectingFileSystem()
  /// Returns an errno to make a file-system step fail; nil lets it run.
  var fault: ((FileStep, String) -> Int32?)? {
    get { fileSystem.fault }
    set { fileSystem.fault = newValue }
  }

  init() throws {
    home = try TemporaryDirectory()
    key = try SymmetricKey.generate()
  }

  /// The registry's directory (created on the first change).
  var directory: String { home.path("device-only") }
  var registryPath: String { directory + "/assistant-keys.registry" }
  var lastUsedPath: String { directory + "/assistant-keys.last-used" }

  /// A new instance, as another process (or the same after a reboot) would open it.
  func open(key: SymmetricKey? = nil) throws -> AssistantKeyRegistry {
    let clock = self.clock
    return try AssistantKeyRegistry(
      directory: directory, integrityKey: key ?? self.key, anchor: nil, clock: { clock.now },
      fileSystem: fileSystem)
  }

  func registryText() throws -> String {
    try String(contentsOfFile: registryPath, encoding: .utf8)
  }

  /// Overwrites the registry file in place, as an attacker with write access would.
  func overwriteRegistry(_ text: String) throws {
    try overwriteRegistry(Array(text.utf8))
  }

  func overwriteRegistry(_ bytes: [UInt8]) throws {
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: registryPath))
    try handle.truncate(atOffset: 0)
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
  }
}

extension AssistantKey {
  /// The key string, for tests only: production code never makes one.
  var testString: String { withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }
}

/// Runs `body` and returns the AssistantKeyError it threw, or nil.
func assistantError(_ body: () throws -> Void) -> AssistantKeyError? {
  do {
    try body()
    return nil
  } catch let error as AssistantKeyError {
    return error
  } catch {
    return .crypto(.backendFailure(function: "unexpected error type \(type(of: error))"))
  }
}
