import CommandKit
import FoundationEssentials
import TaskSystem
import TaskVault
import TaskerCore
import TaskerSync

/// `tasker sync setup|off|status|devices|now|remove-device`: Layer 1, off by default.
struct SyncCommand: Command, CommandGroup {
  static let spec = CommandSpec(
    name: "sync",
    abstract: "Sync tasks, pages and attachments through storage you own, everything sealed (off until 'sync setup').",
    discussion: "Everything written to the storage is sealed under the vault's sync key, which travels only with "
      + "the note keys ('taskkey pair', 'taskkey export-sync'); note text and page bodies are sealed once more "
      + "under the note keys. Each device appends only its own numbered objects and never replaces one, so a "
      + "folder kept in step by Syncthing, Nextcloud's client or Dropbox, or a USB stick, works as it is. An "
      + "attachment's content travels as a sealed blob of its own, fetched by another device when 'tasker attach "
      + "get' first reads it. With sync not set up, Tasker writes nothing outside its home. The formats: docs/formats/sync-storage.md.",
    example: """
      tasker sync setup ~/Sync --name laptop
      tasker sync now
      tasker sync status
      """)
  static let subcommands: [any CommandDeclaration.Type] = [
    SyncSetupCommand.self, SyncOffCommand.self, SyncStatusCommand.self, SyncDevicesCommand.self, SyncNowCommand.self,
    SyncRemoveDeviceCommand.self, SyncCompactCommand.self,
  ]

  /// The vault directory of this environment.
  static func vaultDirectory(_ context: CommandContext) throws -> String {
    guard let directory = VaultKeySource(environment: context.environment).directory else {
      throw TaskerError.noVaultLocation
    }
    return directory
  }

  /// The setup of this environment's database.
  static func setup(_ context: CommandContext, create: Bool = false) throws -> SyncSetup {
    SyncSetup(store: try context.store(create: create), vaultDirectory: try vaultDirectory(context))
  }

  /// Seconds a WebDAV exchange may take: `TASKER_SYNC_TIMEOUT` (1 to 600),
  /// else 120.
  static func timeout(_ context: CommandContext) -> Int {
    context.environment["TASKER_SYNC_TIMEOUT"].flatMap { Int($0) }.flatMap { (1...600).contains($0) ? $0 : nil } ?? 120
  }

  /// The engine for this environment's database, as set up.
  static func engine(_ context: CommandContext) throws -> SyncEngine {
    let setup = try setup(context)
    let configuration = try setup.configuration()
    return try SyncEngine(
      store: setup.store, configuration: configuration, keys: try setup.keys(),
      target: try setup.storage(for: configuration, timeoutSeconds: timeout(context)))
  }
}

/// `tasker sync setup DIR|URL [--name NAME] [--user U [--password-file F]] [--ca-file F] [--allow-http]`.
struct SyncSetupCommand: Command {
  static let name = OptionSpec.value(
    "--name", "NAME", help: "This device's name, shown to your other devices (default: the host name).")
  static let user = OptionSpec.value(
    "--user", "USER", help: "The WebDAV user (Basic authentication); the password is asked on the terminal.")
  static let passwordFile = OptionSpec.value(
    "--password-file", "F", .file,
    help: "Read the WebDAV password (an app password, one per device) from the first line of this 0600 file.")
  static let caFile = OptionSpec.value(
    "--ca-file", "F", .file, help: "Trust this PEM certificate authority for the server instead of the system's.")
  static let allowHTTP = OptionSpec.flag(
    "--allow-http", help: "Allow a plain http:// URL; only to this machine (loopback), never across a network.")
  static let spec = CommandSpec(
    name: "setup", abstract: "Turn sync on with a folder or a WebDAV URL: this device joins it, or starts it.",
    arguments: [
      ArgumentSpec(
        name: "DIR|URL", kind: .directory,
        help: "A folder (Tasker writes DIR/tasker-sync/) or an https:// WebDAV collection (URL/tasker-sync/).")
    ],
    options: [name, user, passwordFile, caFile, allowHTTP],
    json: JSONShape(
      fields: ["kind", "target", "device", "name", "target_id", "epoch", "outside"],
      help: "what was set up, the sync key's epoch, and outside (false)."),
    discussion: "Needs the vault unlocked. The first device makes the sync key (a synchronisable vault item) and "
      + "the storage's marker; another device needs the same keys first ('taskkey pair' or 'taskkey init "
      + "--from-bundle') and then runs setup with the same target and its own credential. Which target a database "
      + "syncs with, and the WebDAV password, are kept in the vault, device-only, never in the database or on the "
      + "command line. The next 'sync now' sends every task and page.",
    example: """
      tasker sync setup ~/Sync --name laptop
      tasker sync setup https://cloud.example.com/remote.php/dav/files/me/Tasker --user me
      """)

  let target: String
  let deviceName: String?
  let userName: String?
  let passwordPath: String?
  let caPath: String?
  let plainHTTP: Bool
  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    target = arguments.argument(0)!
    deviceName = arguments.value(Self.name)
    userName = arguments.value(Self.user)
    passwordPath = arguments.value(Self.passwordFile)
    caPath = arguments.value(Self.caFile)
    plainHTTP = arguments.flag(Self.allowHTTP)
    json = arguments.flag(CommandSpec.jsonOption)
    let isURL = target.hasPrefix("https://") || target.hasPrefix("http://")
    guard isURL || (userName == nil && passwordPath == nil && caPath == nil && !plainHTTP) else {
      throw UsageError(
        message: "--user, --password-file, --ca-file and --allow-http are for a WebDAV URL",
        usage: "tasker sync setup URL --user USER")
    }
    guard passwordPath == nil || userName != nil else {
      throw UsageError(
        message: "--password-file needs --user", usage: "tasker sync setup URL --user USER --password-file F")
    }
    guard !target.hasPrefix("http://") || plainHTTP else {
      throw UsageError(
        message: "a plain http:// URL sends everything unprotected in transit",
        usage: "use https://, or --allow-http to loopback")
    }
  }

  func run(_ context: CommandContext) throws {
    let name = deviceName ?? Self.hostName()
    let request: SyncSetup.Request
    if target.hasPrefix("https://") || target.hasPrefix("http://") {
      let password = try userName.map { _ in try SyncPassword.read(file: passwordPath) }
      request = .webdav(url: target, user: userName, password: password, caFile: caPath)
    } else {
      request = .folder(target)
    }
    let setup = try SyncCommand.setup(context, create: true)
    let configuration = try setup.setUp(request, deviceName: name)
    if json {
      return try context.printJSON(SyncStatusCommand.json(configuration, epochs: try setup.epochStatus(), devices: nil))
    }
    try context.print("sync set up: \(configuration.root), this device \(configuration.name) (\(configuration.device))")
    context.note("run 'tasker sync now' to send and receive")
  }

  /// The kernel's host name, or `device`.
  static func hostName() -> String {
    let bytes = (try? OpenFile.reading("/proc/sys/kernel/hostname").readAll(limit: 256)) ?? []
    let name = String(decoding: bytes.filter { $0 > 0x20 && $0 < 0x7f }, as: UTF8.self)
    return name.isEmpty || name.unicodeScalars.count > 64 ? "device" : name
  }
}

/// `tasker sync off`.
struct SyncOffCommand: Command {
  static let spec = CommandSpec(
    name: "off", abstract: "Turn sync off for this database; the storage and the sync key are left as they are.",
    json: JSONShape(
      fields: ["sync", "blobs_kept"],
      help: "\"off\", and how many blobs of deleted attachments stay at the storage until a setup with it again."),
    discussion: "The records keep their identities, so setting up again with the same folder makes no duplicates. "
      + "The blobs of deleted attachments that were still waiting for every device to have the deletion stay at "
      + "the storage: the database keeps them, and 'tasker sync setup' with the same target removes them once "
      + "every device it knows has the deletion again (remove this device's old id with 'tasker sync "
      + "remove-device ID' on the new setup, as it no longer syncs). "
      + "To leave nothing at the storage, delete DIR/tasker-sync/ on every device.",
    example: "tasker sync off")

  let json: Bool

  init(_ arguments: ParsedArguments) throws {
    json = arguments.flag(CommandSpec.jsonOption)
  }

  func run(_ context: CommandContext) throws {
    let kept = try SyncCommand.setup(context).turnOff()
    if json { return try context.printJSON(["sync": "off", "blobs_kept": .integer(Int64(kept))]) }
    try context.print("sync turned off")
    if kept > 0 {
      try context.print(
        "\(kept) blob\(kept == 1 ? "" : "s") of deleted attachments stay at the storage: 'tasker sync setup' with "
          + "the same target removes them once every device has the deletion")
    }
  }
}
