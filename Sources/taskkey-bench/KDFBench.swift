import CBenchBaseline
import Foundation
import TaskCrypto
import TaskVault

/// Argon2id (issue 14 goal 8): fixed memory at most 256 MiB, the same costs
/// from three calibrations on this machine, and an unlock (`taskkey unlock`
/// of a calibrated vault, a whole process) within one second of CPU time.
enum KDFBench {
  static func rows(scratch: Scratch) throws -> [Row] {
    let costs = try (0..<3).map { _ in try VaultKDF.calibrate() }
    let same = Set(costs.map { "\($0.opsLimit)/\($0.memoryKiB)" }).count == 1
    let chosen = costs[0]
    var rows = [
      Row(
        name: "Argon2id memory", size: "-", measured: "\(chosen.memoryKiB >> 10) MiB (fixed)", spread: "-",
        goal: "<= 256 MiB", met: chosen.memoryKiB <= 256 << 10),
      Row(
        name: "Argon2id calibration, 3 runs", size: "-",
        measured: costs.map { "t=\($0.opsLimit)" }.joined(separator: ", "), spread: "-", goal: "all equal",
        met: same),
    ]
    // A calibrated vault, unlocked by a real process.
    let home = scratch.path("calibrated-home")
    try FileManager.default.createDirectory(
      atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    setenv("TASKKEY_HOME", home + "/keys", 1)
    defer { setenv("TASKKEY_HOME", scratch.path("home"), 1) }
    _ = try run([scratch.taskkey, "init", "--passphrase-file", scratch.path("passphrase")])
    var unlocks = [Double]()
    for _ in 0..<3 {
      _ = try run([scratch.taskkey, "lock"])
      let (cpu, peak) = try run([scratch.taskkey, "unlock", "--passphrase-file", scratch.path("passphrase")])
      unlocks.append(Double(cpu) / 1e9)
      _ = peak
    }
    let median = unlocks.sorted()[1]
    rows.append(
      Row(
        name: "taskkey unlock (calibrated vault), CPU", size: "-",
        measured: String(format: "%.2f s (t=%d, %d MiB)", median, chosen.opsLimit, chosen.memoryKiB >> 10),
        spread: String(format: "%.2f-%.2f", unlocks.min()!, unlocks.max()!), goal: "<= 1.00 s", met: median <= 1.0))
    return rows
  }
}
