import Foundation
import TaskerTestSupport
import Testing

@Suite("Memory: encrypt, rewrap and keys --values stream in bounded batches")
struct MemoryTests {
  /// The ceiling from the issue, for every command and every size.
  static let ceilingKiB = 64 << 10

  /// Runs the built `tasker` with `arguments` as the only child of a
  /// Python process, output discarded, and returns its peak resident set
  /// (`getrusage(RUSAGE_CHILDREN).ru_maxrss`, in KiB).
  func peakKiB(_ device: TestDevice, _ arguments: [String]) throws -> Int {
    let measured = try Binary(path: Binary.which("python3")).run(
      [
        "-c",
        """
        import resource, subprocess, sys
        status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
        print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        """,
        Binary.tasker.path,
      ] + arguments, environment: device.environment)
    let words = measured.stdoutText.split(whereSeparator: \.isWhitespace)
    guard measured.status == 0, words.count == 2, let status = Int(words[0]), let kib = Int(words[1]) else {
      throw SetupFailure("python3: \(measured.stdoutText) \(measured.stderr)")
    }
    #expect(status == 0, "tasker \(arguments): \(measured.stderr)")
    return kib
  }

  /// Fills a new database with `count` plain notes of `noteBytes` bytes,
  /// then measures encrypt, rewrap after a rotation, and keys --values.
  func peaks(count: Int, noteBytes: Int) throws -> [String: Int] {
    let device = try TestDevice()
    try device.fillPlain(count: count, noteBytes: noteBytes)
    var peaks = ["encrypt": try peakKiB(device, ["encrypt"])]
    #expect(try device.taskkey(["rotate"]).status == 0)
    peaks["rewrap"] = try peakKiB(device, ["rewrap"])
    peaks["keys --values"] = try peakKiB(device, ["keys", "--values"])
    let usage = try #require(try device.tasker(["keys", "--json"]).json() as? [String: Any])
    let keys = try #require(usage["keys"] as? [[String: Any]])
    #expect(keys.count == 1 && keys[0]["task_notes"] as? Int == count, "every body rewrapped: \(keys)")
    return peaks
  }

  // The three sizes run side by side: the large one is bound by the disk (a
  // few GB written with a sync per batch), not the processor.
  @Test(arguments: [(1_000, 1024), (100_000, 1024), (400, 1 << 20)])
  func peakMemoryStaysUnder64MiBWhateverTheNumberAndSizeOfBodies(count: Int, noteBytes: Int) throws {
    let measured = try peaks(count: count, noteBytes: noteBytes)
    let report = "\(count) bodies of \(noteBytes) bytes: peak RSS KiB \(measured.sorted { $0.key < $1.key })"
    print(report)
    for (command, kib) in measured { #expect(kib < Self.ceilingKiB, "\(command): \(report)") }
  }
}
