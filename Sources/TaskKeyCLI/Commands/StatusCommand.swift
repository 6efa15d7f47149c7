import CommandKit
import FoundationEssentials
import TaskCrypto
import TaskVault

/// `taskkey status`: the vault's header facts and lock state.
struct StatusCommand: Command {
  static let checkOption = OptionSpec.flag(
    "--check",
    help: "Print nothing; exit 0 when the vault is unlocked, 14 when it is locked, 16 when there is none. "
      + "For scripts: 'taskkey status --check && …'.")

  static let spec = CommandSpec(
    name: "status", abstract: "Show where the vault is, whether it is unlocked, and its KDF strength.",
    options: [checkOption],
    json: JSONShape(
      fields: [
        "directory", "state", "lock_reason", "unlocked_until", "format_version", "vault_id", "kdf", "created",
        "generation", "device_only_store", "device_only_generation",
      ],
      help: "{directory, state (\"locked\" or \"unlocked\"), lock_reason, unlocked_until, format_version, vault_id, "
        + "kdf {algorithm, preset, ops_limit, memory_kib}, created, generation, device_only_store (\"present\" or "
        + "\"absent\": absent after a restore or before the first device-only item), device_only_generation "
        + "(null when absent)}."),
    example: """
      # In a script: unlock only when needed.
      taskkey status --check || taskkey unlock
      """)

  let check: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    check = arguments.flag(Self.checkOption)
    json = arguments.flag(CommandSpec.jsonOption)
    if check && json { throw arguments.usageError("give --check or --json, not both") }
  }

  struct Output: Encodable {
    struct KDF: Encodable {
      let algorithm: String
      let preset: String
      let opsLimit: UInt32
      let memoryKib: UInt32
    }
    let directory: String
    let state: String
    let lockReason: String?
    let unlockedUntil: String?
    let formatVersion: Int
    let vaultId: String
    let kdf: KDF
    let created: String
    let generation: UInt64
    let deviceOnlyStore: String
    let deviceOnlyGeneration: UInt64?

    func encode(to encoder: Encoder) throws {
      // Every field always present, null when absent: one shape for scripts.
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(directory, forKey: .directory)
      try container.encode(state, forKey: .state)
      try container.encode(lockReason, forKey: .lockReason)
      try container.encode(unlockedUntil, forKey: .unlockedUntil)
      try container.encode(formatVersion, forKey: .formatVersion)
      try container.encode(vaultId, forKey: .vaultId)
      try container.encode(kdf, forKey: .kdf)
      try container.encode(created, forKey: .created)
      try container.encode(generation, forKey: .generation)
      try container.encode(deviceOnlyStore, forKey: .deviceOnlyStore)
      try container.encode(deviceOnlyGeneration, forKey: .deviceOnlyGeneration)
    }

    enum CodingKeys: String, CodingKey {
      case directory, state, lockReason, unlockedUntil, formatVersion, vaultId, kdf, created, generation
      case deviceOnlyStore, deviceOnlyGeneration
    }
  }

  func run(_ streams: StandardStreams) throws {
    if check {
      // Nothing printed: the exit code is the answer.
      do {
        if case .locked = try openVault(streams).status().lockState { throw QuietExit(code: .vaultLocked) }
      } catch let quiet as QuietExit {
        throw quiet
      } catch {
        throw QuietExit(code: FailureReport(error).code)
      }
      return
    }
    let status = try openVault(streams).status()
    var reason: LockReason?
    var until: Date?
    switch status.lockState {
    case .locked(let why): reason = why
    case .unlocked(let limit): until = limit
    }
    let preset = status.kdfPreset == .calibrated ? "calibrated" : "fast-test-only"
    if json {
      let output = Output(
        directory: status.directory, state: reason == nil ? "unlocked" : "locked", lockReason: reason?.rawValue,
        unlockedUntil: until.map(isoTime), formatVersion: status.formatVersion, vaultId: status.vaultID,
        kdf: .init(
          algorithm: "argon2id13", preset: preset, opsLimit: status.kdfParameters.opsLimit,
          memoryKib: status.kdfParameters.memoryKiB),
        created: isoTime(status.created), generation: status.generation,
        deviceOnlyStore: status.deviceOnlyGeneration == nil ? "absent" : "present",
        deviceOnlyGeneration: status.deviceOnlyGeneration)
      return try streams.printJSON(output)
    }
    let times = TimeText(streams)
    let state =
      reason.map { "locked (\($0.rawValue))" } ?? until.map { "unlocked until \(times.show($0))" }
      ?? "unlocked until reboot or lock"
    let deviceOnly =
      status.deviceOnlyGeneration.map { "present, generation \($0)" }
      ?? "absent (starts empty; device-only items are not in backups)"
    try streams.print(
      """
      vault:       \(status.directory)
      state:       \(state)
      format:      \(status.formatVersion)
      vault id:    \(status.vaultID)
      kdf:         \(status.kdfParameters), \(status.kdfPreset.rawName)
      created:     \(times.show(status.created))
      generation:  \(status.generation)
      device-only: \(deviceOnly)
      """)
  }
}
