import Foundation
import TaskKeyTestSupport

/// A vault made through the real binary with everything TaskKey keeps:
/// a synchronisable item, device-only items, a minted and verified
/// assistant key (so the registry, its key and the last-used file exist).
final class FullVault: @unchecked Sendable {
  let cli: CLIVault
  let deviceSecret = "sk-DEVICE-ONLY-\(UUID().uuidString)"
  let syncSecret = "cal-SYNC-\(UUID().uuidString)"
  let assistantKey: String
  private var needles = [(String, [UInt8])]()

  init() throws {
    cli = try CLIVault()
    try Self.check(cli.run(["item", "set", "provider/openai", "--device-only"], text: deviceSecret))
    try Self.check(cli.run(["item", "set", "calendar/token"], text: syncSecret))
    let minted = try cli.run(["mint", "--name", "agent"])
    try Self.check(minted)
    assistantKey = minted.stdoutText.trimmingCharacters(in: .whitespacesAndNewlines)
    try Self.check(cli.run(["verify"], text: assistantKey))
    needles = try readNeedles()
  }

  var directory: String { cli.directory }
  var home: TemporaryDirectory { cli.home }

  /// The bytes that must never appear in anything that leaves the device.
  func forbiddenNeedles() throws -> [(String, [UInt8])] { needles }

  private func readNeedles() throws -> [(String, [UInt8])] {
    var needles: [(String, [UInt8])] = [
      ("device-only secret", Array(deviceSecret.utf8)), ("assistant key", Array(assistantKey.utf8)),
    ]
    for name in ["device.tkv", "assistant-keys.registry", "assistant-keys.last-used", "unlock.session"] {
      let bytes = try fileBytes(directory + "/device-only/" + name)
      // A distinctive 64-byte run from the middle of each (encrypted) file.
      let start = bytes.count / 2
      needles.append(("device-only/\(name) bytes", Array(bytes[start..<min(bytes.count, start + 64)])))
    }
    return needles
  }

  static func check(_ result: ProcessResult, _ line: UInt = #line) throws {
    guard result.status == 0 else {
      throw SetupFailure(description: "line \(line): exit \(result.status): \(result.stderr)")
    }
  }
}

/// A failed set-up step.
struct SetupFailure: Error, CustomStringConvertible {
  let description: String
}

/// Every regular file under `root`, as (relative path, bytes).
func allFiles(under root: String) -> [(String, [UInt8])] {
  var result = [(String, [UInt8])]()
  guard let walker = FileManager.default.enumerator(atPath: root) else { return result }
  while let relative = walker.nextObject() as? String {
    let path = root + "/" + relative
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
      let data = FileManager.default.contents(atPath: path)
    {
      result.append((relative, [UInt8](data)))
    }
  }
  return result
}

/// The result of an external program.
struct ToolResult {
  let status: Int32
  let output: String
}

/// Runs a program found on PATH with extra environment, capturing output.
@discardableResult
func runTool(_ arguments: [String], environment: [String: String] = [:], in directory: String? = nil) throws
  -> ToolResult
{
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = arguments
  var env = ProcessInfo.processInfo.environment
  for (key, value) in environment { env[key] = value }
  process.environment = env
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let pipe = Pipe()
  process.standardOutput = pipe
  process.standardError = pipe
  process.standardInput = FileHandle.nullDevice
  try process.run()
  let data = pipe.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  let result = ToolResult(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
  guard result.status == 0 else {
    throw SetupFailure(description: "\(arguments.joined(separator: " ")) exited \(result.status): \(result.output)")
  }
  return result
}

/// Whether a program is on PATH.
func toolAvailable(_ name: String) -> Bool {
  ["/usr/bin/", "/bin/", "/usr/local/bin/"].contains { FileManager.default.isExecutableFile(atPath: $0 + name) }
}
