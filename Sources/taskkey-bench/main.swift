// taskkey-bench: TaskKey's performance goals, as ratios against raw OpenSSL
// measured in the same run on the same machine. Absolute times on a shared
// machine are noise; the ratio of two runs side by side is not.
//
//   swift run -c release taskkey-bench [--quick]
//
// Exits 1 when a goal is missed, so a regression is visible, but it is never
// part of `make test`: timing does not belong in unit tests.
import CBenchBaseline
import Foundation
import TaskCrypto

struct Goal {
  let name: String
  let size: Int
  /// The largest acceptable ratio TaskKey-time / raw-OpenSSL-time.
  let maximumRatio: Double
  let ours: (Int) throws -> Void
  let raw: (Int, Int) -> UInt64
}

func nanoseconds(_ body: () throws -> Void) rethrows -> UInt64 {
  let start = DispatchTime.now().uptimeNanoseconds
  try body()
  return DispatchTime.now().uptimeNanoseconds - start
}

let quick = CommandLine.arguments.contains("--quick")
AttachmentBench.start(quick: quick)
let keyring = try Keyring.generate()
let key = keyring.primary.key
let aad = Array("tc1.0a0b0c0d:".utf8)

var goals = [Goal]()
for size in [64, 1024, 65_536, 1 << 20] {
  let plaintext = [UInt8](repeating: 0x61, count: size)
  let box = try AES.GCM.seal(plaintext, using: key, authenticating: aad)
  let sealed = try SealedValue.seal(bytes: plaintext, using: keyring.primary, context: "note/1/body")
  // Small messages are dominated by per-call overhead (allocations, the
  // Swift arrays around the C call); large ones by AES itself.
  let sealRatio = size < 4096 ? 3.0 : 1.25
  goals.append(
    Goal(
      name: "AES.GCM.seal", size: size, maximumRatio: sealRatio,
      ours: { n in for _ in 0..<n { _ = try AES.GCM.seal(plaintext, using: key, authenticating: aad) } },
      raw: { size, n in taskkey_bench_raw_gcm_seal(size, n) }))
  goals.append(
    Goal(
      name: "AES.GCM.open", size: size, maximumRatio: sealRatio,
      ours: { n in for _ in 0..<n { _ = try AES.GCM.open(box, using: key, authenticating: aad) } },
      raw: { size, n in taskkey_bench_raw_gcm_open(size, n) }))
  // The text format: the baseline is OpenSSL doing the same job, GCM plus
  // EVP_EncodeBlock / EVP_DecodeBlock base64. TaskKey's decoder also
  // enforces canonical form, which OpenSSL's does not.
  goals.append(
    Goal(
      name: "SealedValue.seal", size: size, maximumRatio: size < 4096 ? 3.0 : 1.5,
      ours: { n in for _ in 0..<n { _ = try SealedValue.seal(bytes: plaintext, using: keyring.primary) } },
      raw: { size, n in taskkey_bench_raw_sealed_seal(size, n) }))
  goals.append(
    Goal(
      name: "SealedValue.open", size: size, maximumRatio: size < 4096 ? 3.0 : 1.5,
      ours: { n in for _ in 0..<n { _ = try SealedValue.openBytes(sealed, using: keyring, context: "note/1/body") } },
      raw: { size, n in taskkey_bench_raw_sealed_open(size, n) }))
  goals.append(
    Goal(
      name: "SHA256.hash", size: size, maximumRatio: size < 4096 ? 3.0 : 1.25,
      ours: { n in for _ in 0..<n { _ = SHA256.hash(data: plaintext) } },
      raw: { size, n in taskkey_bench_raw_sha256(size, n) }))
}

func iterations(for size: Int) -> Int {
  let bytes = quick ? 8 << 20 : 64 << 20
  return max(20, bytes / max(size, 256))
}

print("taskkey-bench: ratio = TaskKey time / raw OpenSSL time, same run, best of 5 rounds")
print(
  "operation".padding(toLength: 18, withPad: " ", startingAt: 0)
    + "size".padding(toLength: 10, withPad: " ", startingAt: 0)
    + "TaskKey MB/s   raw MB/s   ratio   goal   result")
var missed = 0
for goal in goals {
  let n = iterations(for: goal.size)
  var best = (ours: UInt64.max, raw: UInt64.max)
  for _ in 0..<5 {
    // Alternate the two so that machine noise hits both alike.
    best.ours = min(best.ours, try nanoseconds { try goal.ours(n) })
    let raw = goal.raw(goal.size, n)
    guard raw > 0 else {
      print("raw OpenSSL baseline failed for \(goal.name)")
      exit(2)
    }
    best.raw = min(best.raw, raw)
  }
  let ratio = Double(best.ours) / Double(best.raw)
  let megabytes = Double(goal.size * n) / 1_000_000
  let oursRate = megabytes / (Double(best.ours) / 1e9)
  let rawRate = megabytes / (Double(best.raw) / 1e9)
  let met = ratio <= goal.maximumRatio
  if !met { missed += 1 }
  let sizeText = goal.size >= 1024 ? "\(goal.size / 1024) KiB" : "\(goal.size) B"
  print(
    goal.name.padding(toLength: 18, withPad: " ", startingAt: 0)
      + sizeText.padding(toLength: 10, withPad: " ", startingAt: 0)
      + String(
        format: "%12.1f %10.1f %7.2f %6.2f   %@", oursRate, rawRate, ratio, goal.maximumRatio, met ? "met" : "MISSED"))
}
missed += AttachmentBench.run(quick: quick)
print(missed == 0 ? "all goals met" : "\(missed) goal(s) missed")
exit(missed == 0 ? 0 : 1)
