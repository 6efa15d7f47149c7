import Foundation

/// The Python `cryptography` peer (scripts/bench_peer.py), kept running for
/// the whole benchmark so each round costs one line each way.
final class PythonPeer {
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var pending = Data()

  init(python: String, script: String, aad: String) throws {
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [script, aad]
    process.standardInput = input
    process.standardOutput = output
    try process.run()
  }

  /// Nanoseconds for `count` calls of AESGCM.encrypt (or decrypt) on
  /// `size` bytes, timed inside Python.
  func time(_ operation: String, size: Int, count: Int) throws -> UInt64 {
    input.fileHandleForWriting.write(Data("\(operation) \(size) \(count)\n".utf8))
    while !pending.contains(UInt8(ascii: "\n")) {
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { throw BenchError.failed("the Python peer stopped") }
      pending.append(chunk)
    }
    let end = pending.firstIndex(of: UInt8(ascii: "\n"))!
    let line = String(decoding: pending[pending.startIndex..<end], as: UTF8.self)
    pending.removeSubrange(pending.startIndex...end)
    guard let value = UInt64(line) else { throw BenchError.failed("the Python peer said '\(line)'") }
    return value
  }

  deinit {
    try? input.fileHandleForWriting.close()
    process.waitUntilExit()
  }
}
