import Foundation
import TaskCrypto
import TaskVault

/// `taskkey status`: the vault's header facts and lock state.
struct StatusCommand: Command {
  static let name = "status"
  static let abstract = "Show where the vault is, whether it is unlocked, and its KDF strength."
  static let usage = "taskkey status [--json]"
  static let options = """
    OPTIONS:
      --json            One JSON object: directory, state ("locked" or
                        "unlocked"), lockReason, unlockedUntil, formatVersion,
                        vaultID, kdf {algorithm, preset, opsLimit, memoryKiB},
                        created, generation, deviceOnlyStore ("present"
                        or "absent": absent after a restore or on a vault
                        that never stored a device-only item; it starts
                        empty), deviceOnlyGeneration (omitted when absent).
      -h, --help        Show this help.
    """
  static let example = """
      # Is the vault unlocked?
      taskkey status --json
    """

  let json: Bool

  init(parsing arguments: inout Arguments) throws {
    json = try arguments.flag("--json")
    try arguments.finish()
  }

  struct Output: Encodable {
    struct KDF: Encodable {
      let algorithm: String
      let preset: String
      let opsLimit: UInt32
      let memoryKiB: UInt32
    }
    let directory: String
    let state: String
    let lockReason: String?
    let unlockedUntil: String?
    let formatVersion: Int
    let vaultID: String
    let kdf: KDF
    let created: String
    let generation: UInt64
    let deviceOnlyStore: String
    let deviceOnlyGeneration: UInt64?
  }

  func run(_ streams: StandardStreams) throws {
    let status = try vaultCall { try openVault(streams).status() }
    var reason: String?
    var until: String?
    switch status.lockState {
    case .locked(let why): reason = why.rawValue
    case .unlocked(let limit): until = limit.map(isoDate)
    }
    let preset = status.kdfPreset == .calibrated ? "calibrated" : "fast-test-only"
    if json {
      let output = Output(
        directory: status.directory, state: reason == nil ? "unlocked" : "locked", lockReason: reason,
        unlockedUntil: until, formatVersion: status.formatVersion, vaultID: status.vaultID,
        kdf: .init(
          algorithm: "argon2id13", preset: preset, opsLimit: status.kdfParameters.opsLimit,
          memoryKiB: status.kdfParameters.memoryKiB),
        created: isoDate(status.created), generation: status.generation,
        deviceOnlyStore: status.deviceOnlyGeneration == nil ? "absent" : "present",
        deviceOnlyGeneration: status.deviceOnlyGeneration)
      try streams.print(try jsonText(output))
      return
    }
    let state =
      reason.map { "locked (\($0))" } ?? until.map { "unlocked until \($0)" } ?? "unlocked until reboot or lock"
    try streams.print(
      """
      vault:       \(status.directory)
      state:       \(state)
      format:      \(status.formatVersion)
      vault id:    \(status.vaultID)
      kdf:         \(status.kdfParameters), \(status.kdfPreset.rawName)
      created:     \(isoDate(status.created))
      generation:  \(status.generation)
      device-only: \(status.deviceOnlyGeneration.map { "present, generation \($0)" } ?? "absent (starts empty; device-only items are not in backups)")
      """)
  }
}
