// The attachment goals of `make bench` (issue 15): chunked encryption
// against the floor in the same run, peak memory of a 1 GiB file, and a
// 4 KiB range read from the middle of a 1 GiB file.
import CBenchBaseline
import Foundation
import TaskAttachments
import TaskCrypto

enum AttachmentBench {
  /// Seal and open must reach this share of the floor's throughput.
  static let throughputShare = 0.90
  /// Peak resident memory allowed while sealing or opening 1 GiB.
  static let peakKiB = 32 * 1024
  /// The longest a 4 KiB range read (open and read) may take.
  static let rangeNanoseconds: UInt64 = 1_000_000
  static let mebibyte = 1 << 20

  /// Called first in `main`: `attachment-child seal|open IN OUT KEY-HEX`
  /// seals or opens one file through TaskAttachments and exits (the process
  /// `/usr/bin/time -v` measures); `--attachments` runs only these goals.
  static func start(quick: Bool) {
    let arguments = CommandLine.arguments
    if arguments.count == 6 && arguments[1] == "attachment-child" {
      exit(child(arguments[2], input: arguments[3], output: arguments[4], keyHex: arguments[5]) ? 0 : 1)
    }
    if arguments.contains("--attachments") { exit(run(quick: quick) == 0 ? 0 : 1) }
  }

  static func child(_ action: String, input: String, output: String, keyHex: String) -> Bool {
    do {
      let keyring = try keyringFrom(hex: keyHex)
      if action == "seal" {
        _ = try Attachment.seal(file: input, to: output, using: keyring, record: "attachment/bench")
      } else {
        _ = try Attachment.open(file: input, to: output, using: keyring, record: "attachment/bench")
      }
      return true
    } catch {
      FileHandle.standardError.write(Data("attachment-child: \(error)\n".utf8))
      return false
    }
  }

  static func keyringFrom(hex: String) throws -> Keyring {
    let line = Array("0a0b0c0d:\(hex)".utf8)
    return Keyring(primary: try line.withUnsafeBytes { try NoteKey.parseKeyFile($0) })
  }

  /// Runs every goal; returns how many were missed.
  static func run(quick: Bool) -> Int {
    do {
      return try measure(quick: quick)
    } catch {
      print("attachments: \(error)")
      return 1
    }
  }

  static func measure(quick: Bool) throws -> Int {
    var missed = 0
    let key = try SymmetricKey.generate()
    let context = Array("attachment/bench".utf8)
    let plaintext = [UInt8](repeating: 0x61, count: mebibyte)
    print("")
    print("attachments: chunked AES-256-GCM (C2SP, 16 KiB chunks) against the floor: raw OpenSSL AES-256-GCM,")
    print("one reused EVP context, 1 MiB messages over the same bytes (seal: a cached 1 MiB buffer, open: the")
    print("sealed message itself); thread CPU time, best of 5; goal: at least 0.90 of the floor")
    print("operation        size      TaskKey MB/s   floor MB/s   share   goal   result")
    for size in quick ? [mebibyte, 16 * mebibyte] : [mebibyte, 16 * mebibyte, 256 * mebibyte, 1024 * mebibyte] {
      let pieces = size / mebibyte
      // Small messages are repeated so that each timing covers 64 MiB.
      let repeats = max(1, 64 / pieces)
      // Seal: `repeats` messages of `size` bytes (each with its own salt and
      // key schedule) through the streaming sealer, batches discarded.
      var best = (ours: UInt64.max, floor: UInt64.max)
      var chunkFloor = UInt64.max
      for _ in 0..<5 {
        let start = taskkey_attachment_cpu_ns()
        for _ in 0..<repeats {
          let sealer = try ChunkedEncryption.Sealer(key: key, context: context)
          for _ in 0..<pieces { try sealer.update(plaintext) { _ in } }
          try sealer.finish { _ in }
        }
        best.ours = min(best.ours, taskkey_attachment_cpu_ns() - start)
        best.floor = min(best.floor, taskkey_attachment_floor_seal(size * repeats, mebibyte))
        chunkFloor = min(chunkFloor, taskkey_attachment_floor_seal(size * repeats, ChunkedEncryption.chunkByteCount))
      }
      missed += row("ChunkedSealer", size: size, best, repeats: repeats, chunkFloor: chunkFloor) ? 0 : 1
      // Open: a sealed message of `size` bytes made up front, fed in 1 MiB pieces.
      var sealed = [UInt8]()
      sealed.reserveCapacity(Int(try ChunkedEncryption.sealedByteCount(plaintextByteCount: UInt64(size))))
      let sealer = try ChunkedEncryption.Sealer(key: key, context: context)
      for _ in 0..<pieces { try sealer.update(plaintext) { sealed += $0 } }
      try sealer.finish { sealed += $0 }
      best = (UInt64.max, UInt64.max)
      chunkFloor = UInt64.max
      for _ in 0..<5 {
        let start = taskkey_attachment_cpu_ns()
        for _ in 0..<repeats {
          let opener = try ChunkedEncryption.Opener(key: key, context: context)
          try sealed.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
              let end = min(offset + mebibyte, bytes.count)
              try opener.update(UnsafeRawBufferPointer(rebasing: bytes[offset..<end])) { _ in }
              offset = end
            }
          }
          try opener.finish { _ in }
        }
        best.ours = min(best.ours, taskkey_attachment_cpu_ns() - start)
        // The floor reads the same (uncached) bytes, once per repeat.
        var floor: UInt64 = 0
        var floorOfChunks: UInt64 = 0
        for _ in 0..<repeats {
          sealed.withUnsafeBytes { bytes in
            let body = bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + ChunkedEncryption.headerByteCount
            floor += taskkey_attachment_floor_open_from(body, size, mebibyte)
            floorOfChunks += taskkey_attachment_floor_open_from(body, size, ChunkedEncryption.sealedChunkByteCount)
          }
        }
        best.floor = min(best.floor, floor)
        chunkFloor = min(chunkFloor, floorOfChunks)
      }
      missed += row("ChunkedOpener", size: size, best, repeats: repeats, chunkFloor: chunkFloor) ? 0 : 1
    }
    missed += try files(size: quick ? 64 * mebibyte : 1024 * mebibyte)
    return missed
  }

  /// Prints one throughput row; returns whether the goal was met.
  static func row(
    _ name: String, size: Int, _ best: (ours: UInt64, floor: UInt64), repeats: Int, chunkFloor: UInt64
  ) -> Bool {
    let megabytes = Double(size * repeats) / 1_000_000
    let share = Double(best.floor) / Double(best.ours)
    let met = best.floor > 0 && share >= throughputShare
    print(
      name.padding(toLength: 17, withPad: " ", startingAt: 0)
        + "\(size / mebibyte) MiB".padding(toLength: 10, withPad: " ", startingAt: 0)
        + String(
          format: "%12.1f %12.1f %7.2f %6.2f   %@   (16 KiB-message floor %.1f MB/s, share %.2f)",
          megabytes / (Double(best.ours) / 1e9), megabytes / (Double(best.floor) / 1e9), share, throughputShare,
          met ? "met   " : "MISSED", megabytes / (Double(chunkFloor) / 1e9), Double(chunkFloor) / Double(best.ours)))
    return met
  }

  /// Seals and opens a file of `size` bytes in a child process measured by
  /// `/usr/bin/time -v`, then times a 4 KiB range read from its middle.
  static func files(size: Int) throws -> Int {
    var missed = 0
    let directory = NSTemporaryDirectory() + "/taskkey-bench-\(ProcessInfo.processInfo.processIdentifier)"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let plain = directory + "/plain"
    guard FileManager.default.createFile(atPath: plain, contents: nil) else {
      throw BenchError.failed("cannot create \(plain)")
    }
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: plain))
    let block = Data((0..<mebibyte).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    for _ in 0..<(size / mebibyte) { handle.write(block) }
    try handle.close()
    let keyHex = Hex.encode(SecureRandom.bytes(count: 32))
    print("")
    print("attachments: a \(size / mebibyte) MiB file sealed and opened by TaskAttachments in a child process")
    for (action, input, output) in [
      ("seal", plain, directory + "/sealed"), ("open", directory + "/sealed", directory + "/opened"),
    ] {
      guard let (kib, seconds) = try timeChild(action, input, output, keyHex) else {
        print("  \(action): /usr/bin/time is missing (apt-get install time); peak RSS not measured")
        missed += 1
        continue
      }
      let met = kib < peakKiB
      if !met { missed += 1 }
      print(
        String(
          format: "  %@: peak RSS %.1f MiB (goal < 32 MiB) %@, %.2f s wall, %.0f MB/s", action, Double(kib) / 1024,
          met ? "met" : "MISSED", seconds, Double(size) / 1e6 / seconds))
    }
    guard FileManager.default.contentsEqual(atPath: plain, andPath: directory + "/opened") else {
      print("  the opened file differs from the original")
      return missed + 1
    }
    let keyring = try keyringFrom(hex: keyHex)
    var best = UInt64.max
    var bestRead = UInt64.max
    for _ in 0..<20 {
      let start = DispatchTime.now().uptimeNanoseconds
      let reader = try AttachmentReader(path: directory + "/sealed", keyring: keyring, record: "attachment/bench")
      let opened = DispatchTime.now().uptimeNanoseconds
      _ = try reader.read(offset: UInt64(size / 2 - 1000), count: 4096)
      let end = DispatchTime.now().uptimeNanoseconds
      best = min(best, end - start)
      bestRead = min(bestRead, end - opened)
    }
    let met = best < rangeNanoseconds
    if !met { missed += 1 }
    print(
      String(
        format:
          "  4 KiB range read from the middle (open + read, best of 20): %.3f ms (read alone %.3f ms), goal < 1 ms %@",
        Double(best) / 1e6, Double(bestRead) / 1e6, met ? "met" : "MISSED"))
    return missed
  }

  /// Runs `/usr/bin/time -v <self> attachment-child …`; returns peak RSS in
  /// KiB and wall seconds, or nil without /usr/bin/time.
  static func timeChild(_ action: String, _ input: String, _ output: String, _ keyHex: String) throws -> (Int, Double)?
  {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/time") else { return nil }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    process.arguments = ["-v", me, "attachment-child", action, input, output, keyHex]
    let errors = Pipe()
    process.standardError = errors
    let start = DispatchTime.now().uptimeNanoseconds
    try process.run()
    let report = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard process.terminationStatus == 0 else { throw BenchFailure(message: "\(action) child failed: \(report)") }
    let line = report.split(separator: "\n").first { $0.contains("Maximum resident set size") }
    guard let kib = line.flatMap({ Int($0.split(separator: ":").last!.trimmingCharacters(in: .whitespaces)) }) else {
      throw BenchFailure(message: "no peak RSS in /usr/bin/time output")
    }
    return (kib, seconds)
  }

  struct BenchFailure: Error {
    let message: String
  }
}
