import CommandKit
import TaskerCore
import TaskerSync

/// `tasker sync remove-device ID`.
struct SyncRemoveDeviceCommand: Command {
  static let spec = CommandSpec(
    name: "remove-device",
    abstract: "Cut a lost or retired device off: a new sync key that it never receives seals everything after.",
    arguments: [ArgumentSpec(name: "ID", kind: .text, help: "The device's id, as 'tasker sync devices' lists it.")],
    json: JSONShape(
      fields: ["removed", "epoch", "uploaded"],
      help: "the device removed, the new epoch, and the objects sent (the change among them)."),
    discussion: "Syncs first, then makes the next epoch's key and seals it to every other device's own box key "
      + "(read from that device's latest object at the storage); the removed device gets none. Its objects "
      + "written after what this device had read are void everywhere the change has arrived. It can still read "
      + "everything written before the change: change passwords or notes it must not keep. Every other device "
      + "must have synced once (exit 69 names the one that has not). Interrupted, run it again with the same ID.",
    example: "tasker sync remove-device 0f1e2d3c4b5a69788796a5b4c3d2e1f0")

  let device: String
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    device = arguments.argument(0)!
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    guard SyncHex.isID(device) else {
      throw SyncError.invalidArgument(reason: "a device id is 32 lowercase hex digits ('tasker sync devices')")
    }
    let setup = try SyncCommand.setup(context)
    let engine = try SyncCommand.engine(context)
    let report = try SyncProgressLines.around(context.streams) { try engine.removeDevices([device], progress: $0) }
    let epoch = try setup.epochStatus().epoch
    if json {
      return try context.printJSON([
        "removed": .string(device), "epoch": .int(Int(epoch)), "uploaded": .int(report.uploaded),
      ])
    }
    try context.print(
      "removed device \(device): everything from now on is sealed under epoch \(epoch), which it does not have")
  }
}
