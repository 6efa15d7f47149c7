// The CPace line of `make bench` (issue 26): one whole exchange, both sides
// (generator, message, receiving checks, ISK, both confirmation tags),
// through TaskCrypto's `CPace` against the same libsodium calls in C
// (CBenchBaseline's cpace_floor.c). Reported, not judged: the goal belongs
// to the pairing command built on it.
import CBenchBaseline
import Foundation
import TaskCrypto

enum CPaceBench {
  /// `--cpace`: runs only this line and exits.
  static func start(quick: Bool) {
    if CommandLine.arguments.contains("--cpace") { exit(run(quick: quick) ? 0 : 1) }
  }

  /// Prints the line; false when an exchange failed.
  static func run(quick: Bool) -> Bool {
    let count = quick ? 200 : 2000
    do {
      let prs = try Array("Password".utf8).withUnsafeBytes { try SecureBytes(copying: $0) }
      let ci = Array("\u{0b}A_initiator\u{0b}B_responder".utf8)
      let sid = (0..<16).map { UInt8($0) }
      var best = (ours: UInt64.max, floor: UInt64.max)
      for _ in 0..<5 {
        let start = taskkey_attachment_cpu_ns()
        for _ in 0..<count { try exchange(prs: prs, ci: ci, sid: sid) }
        best.ours = min(best.ours, taskkey_attachment_cpu_ns() - start)
        let floor = taskkey_cpace_floor(count)
        guard floor > 0 else { throw BenchError.failed("the C floor's exchange failed") }
        best.floor = min(best.floor, floor)
      }
      let ours = Double(best.ours) / Double(count) / 1000
      let floor = Double(best.floor) / Double(count) / 1000
      print("")
      print("cpace: one CPACE-RISTR255-SHA512 exchange, both sides, with key confirmation; thread CPU time per")
      print("exchange, best of 5 runs of \(count); floor: the same libsodium calls in C")
      print(String(format: "  TaskKey %.1f us   floor %.1f us   TaskKey / floor %.2f", ours, floor, ours / floor))
      return true
    } catch {
      print("cpace: \(error)")
      return false
    }
  }

  static func exchange(prs: SecureBytes, ci: [UInt8], sid: [UInt8]) throws {
    let a = try CPace.Party(role: .initiator, prs: prs, ci: ci, sid: sid, ad: Array("ADa".utf8))
    let b = try CPace.Party(role: .responder, prs: prs, ci: ci, sid: sid, ad: Array("ADb".utf8))
    let keysA = try a.finish(peerMessage: b.message, peerAD: b.ad)
    let keysB = try b.finish(peerMessage: a.message, peerAD: a.ad)
    try keysA.verifyPeerConfirmation(keysB.confirmationTag)
    try keysB.verifyPeerConfirmation(keysA.confirmationTag)
  }
}
